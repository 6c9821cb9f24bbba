import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { latestMigration } from "../../src/storage/Migrations.ts"
import { expectErrorResponse, getWithKey, postJson, send } from "../support/Http.ts"
import { adminKey, backends, client, seedTenant, testServer } from "../support/TestServer.ts"

/** What the whole service does alike on every storage backend. */
describe.each(backends)("the service on $name", ({ name, storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("GET /health reports the storage backend and the migration version, without credentials", () =>
      Effect.gen(function*() {
        const api = yield* client()
        const health = yield* api.health.check()
        expect(health).toEqual({ status: "ok", storage: name, migrationVersion: latestMigration() })
        expect(latestMigration()).toBeGreaterThan(0)
      }))

    it.effect("a NUL character anywhere in the URL or a JSON body answers 400, never 500", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const { apiKey, personalAccessKey, companyId, organizationId } = tenant
        const requests = [
          getWithKey("/api/v0/me?companyId=%00", personalAccessKey),
          getWithKey(`/api/v0/company_users/${companyId}?search=a%00b`, apiKey),
          getWithKey(`/api/v0/api_keys/${companyId}/%00`, apiKey),
          getWithKey(`/api/v0/organizations/${organizationId}/usage/history?companyId=${companyId}&userId=%00`, personalAccessKey),
          HttpClientRequest.delete(`/api/v0/keys/pka%00?companyId=${companyId}`).pipe(HttpClientRequest.setHeader("x-api-key", personalAccessKey)),
          postJson("/api/v0/api_keys", { companyId, name: "a\u0000b" }, apiKey),
          postJson(`/api/v0/company_users/${companyId}`, { email: "a\u0000b@example.com", role: "member" }, apiKey),
          postJson(`/api/v0/company_users/${companyId}`, { email: "c@example.com", role: "member", allowedFeatures: ["chat\u0000"] }, apiKey),
          HttpClientRequest.bearerToken(postJson("/api/v0/admin/users", { email: "a\u0000b@example.com" }), adminKey),
          HttpClientRequest.bearerToken(postJson("/api/v0/admin/organizations", { name: "Nul\u0000Org" }), adminKey)
        ]
        for (const request of requests) expectErrorResponse(yield* send(request), 400, /NUL/)
        // A backslash followed by "u0000" is ordinary text.
        const api = yield* client({ apiKey })
        yield* api.apiKeys.create({ payload: { companyId, name: "literally \\u0000" } })
      }))
  })
})
