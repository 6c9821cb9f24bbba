import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { client, pgliteStorage, seedTenant, testServer } from "../support/TestServer.ts"

it.layer(testServer(pgliteStorage))("GET /api/v0/me", (it) => {
  it.effect("a company key stands for its company", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const me = yield* api.me.get()
      // The bootstrap key acts as the company's owner, who created the tenant.
      expect(me).toMatchObject({ keyKind: "company", companyId: tenant.companyId, userId: tenant.userId, role: "owner" })
    }))

  it.effect("a personal access key needs the company id", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const without = yield* client({ apiKey: tenant.personalAccessKey })
      const error = yield* Effect.flip(without.me.get())
      expect(error._tag).toBe("Unauthorized")
      const withCompany = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const me = yield* withCompany.me.get()
      expect(me).toMatchObject({ keyKind: "personal", userId: tenant.userId, role: "owner" })
    }))
})

