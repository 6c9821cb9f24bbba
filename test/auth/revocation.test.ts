import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failsWith } from "../support/Assertions.ts"
import { addPerson, client, postgresUrl, seedTenant, serversSharingPostgres } from "../support/TestServer.ts"

/** Two server processes on one PostgreSQL; without TEST_DATABASE_URL it is left out (test/support prints the notice). */
const sharedStores = postgresUrl === undefined ? [] : ["postgres"]

describe.each(sharedStores)("revocation across processes on %s", () => {
  it.effect("a key deleted through one server fails on the very next request to the other, every time", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const admin = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      for (let round = 0; round < 25; round++) {
        const name = `rotating-${round}`
        const { apiKey } = yield* admin.apiKeys.create({ payload: { companyId: tenant.companyId, name } })
        const elsewhere = yield* Effect.provideContext(client({ apiKey }), second)
        expect((yield* elsewhere.me.get()).companyId).toBe(tenant.companyId)
        yield* admin.apiKeys.delete({ payload: { name } })
        yield* failsWith(elsewhere.me.get(), "Unauthorized", /Invalid API key/)
      }
    }))

  it.effect("a company user changed or removed through one server is seen by the other at once", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const person = yield* Effect.provideContext(addPerson(tenant, { companyRole: "member" }), first)
      const admin = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      const elsewhere = yield* Effect.provideContext(
        client({ apiKey: person.personalAccessKey, companyId: tenant.companyId }),
        second
      )
      expect((yield* elsewhere.me.get()).role).toBe("member")
      yield* admin.companyUsers.update({
        params: { companyId: tenant.companyId, userId: person.userId },
        payload: { role: "viewer" }
      })
      expect((yield* elsewhere.me.get()).role).toBe("viewer")
      yield* admin.companyUsers.remove({ params: { companyId: tenant.companyId, userId: person.userId } })
      yield* failsWith(elsewhere.me.get(), "NotFound")
    }))
})
