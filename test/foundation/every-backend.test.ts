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

    it.effect("numbers and dates beyond what the database holds answer 400, never 500", () =>
      Effect.gen(function*() {
        const { personalAccessKey, companyId, organizationId } = yield* seedTenant()
        const admin = (path: string, body: unknown) => HttpClientRequest.bearerToken(postJson(path, body), adminKey)
        const summary = `/api/v0/organizations/${organizationId}/usage/history/summary?companyId=${companyId}`
        const cases = [
          [admin("/api/v0/admin/organizations", { name: "x", seats: 2_147_483_648 }), "\"seats\""],
          [admin("/api/v0/admin/organizations", { name: "x", companyLimit: 2_147_483_648 }), "\"companyLimit\""],
          [getWithKey(`${summary}&startDate=0000-01-01`, personalAccessKey), "\"startDate\""],
          [getWithKey(`${summary}&endDate=0001-01-01T00:00:00%2B01:00`, personalAccessKey), "\"endDate\""],
          [postJson(`/api/v0/keys?companyId=${companyId}`, { name: "x", expiresAt: "+275760-09-13T00:00:00.000Z" }, personalAccessKey), "\"expiresAt\""],
          [postJson(`/api/v0/keys?companyId=${companyId}`, { name: "x", expiresAt: "+010000-01-01T00:00:00.000Z" }, personalAccessKey), "\"expiresAt\""]
        ] as const
        for (const [request, field] of cases) expectErrorResponse(yield* send(request), 400, field)
        const largest = yield* send(admin("/api/v0/admin/organizations", { name: "x", seats: 2_147_483_647, creditLimit: Number.MAX_SAFE_INTEGER }))
        expect(largest.status).toBe(201)
        expect(largest.body).toMatchObject({ seats: 2_147_483_647, creditLimit: Number.MAX_SAFE_INTEGER })
        const latest = yield* send(postJson(`/api/v0/keys?companyId=${companyId}`, { name: "x", expiresAt: "9999-12-31T23:59:59.999Z" }, personalAccessKey))
        expect(latest.status).toBe(201)
        expect(yield* send(getWithKey(`${summary}&startDate=0001-01-01T00:00:00Z&endDate=9999-12-31`, personalAccessKey))).toMatchObject({ status: 200 })
      }))
  })
})
