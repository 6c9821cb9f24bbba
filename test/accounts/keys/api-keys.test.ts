import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failsWith, masked } from "../../support/Assertions.ts"
import { expectErrorResponse, postJson, send } from "../../support/Http.ts"
import { addPerson, client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"


it.layer(testServer(pgliteStorage))("company API keys (/api/v0/api_keys)", (it) => {
  it.effect("POST creates a named key and shows its value once; the key works at once", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const { apiKey } = yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "ci" } })
      expect(apiKey).toMatch(/^plk_[0-9A-Za-z]{49}$/)
      const ci = yield* client({ apiKey })
      expect((yield* ci.me.get()).companyId).toBe(tenant.companyId)
      const [, response] = yield* api.apiKeys.create({
        payload: { companyId: tenant.companyId, name: "deploy" },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
    }))

  it.effect("POST with a name the company already uses answers 400", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      yield* failsWith(api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "default" } }), "BadRequest", /"default" already exists/)
      // Names are per company: another company may use it.
      const other = yield* seedTenant("other")
      const otherApi = yield* client({ apiKey: other.apiKey })
      yield* otherApi.apiKeys.create({ payload: { companyId: other.companyId, name: "ci" } })
      yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "ci" } })
    }))

  it.effect("POST needs a non-blank name of at most 100 characters (400 naming the field)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      expectErrorResponse(yield* send(postJson("/api/v0/api_keys", { companyId: tenant.companyId }, tenant.apiKey)), 400, "\"name\"")
      for (const name of ["", "   ", "n".repeat(101)]) {
        expectErrorResponse(yield* send(postJson("/api/v0/api_keys", { companyId: tenant.companyId, name }, tenant.apiKey)), 400, "\"name\"")
      }
    }))

  it.effect("GET answers the company's default key, masked; GET by name answers that key, masked, or 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const { apiKey: ci } = yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "ci" } })
      expect(yield* api.apiKeys.get({ query: { companyId: tenant.companyId } })).toEqual({ apiKey: masked(tenant.apiKey) })
      expect(yield* api.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(tenant.apiKey) })
      expect(yield* api.apiKeys.getByName({ params: { companyId: tenant.companyId, name: "ci" } })).toEqual({ apiKey: masked(ci) })
      yield* failsWith(
        api.apiKeys.getByName({ params: { companyId: tenant.companyId, name: "nope" } }),
        "NotFound",
        "No API key named \"nope\""
      )
      const longName = "n".repeat(300)
      yield* failsWith(
        api.apiKeys.getByName({ params: { companyId: tenant.companyId, name: longName } }),
        "NotFound",
        `No API key named "${longName}"`
      )
      // Without the default key, the oldest remaining one is the company's key.
      yield* api.apiKeys.delete({ payload: { companyId: tenant.companyId, name: "default" } })
      const ciApi = yield* client({ apiKey: ci })
      expect(yield* ciApi.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(ci) })
    }))

  it.effect("GET of a company without keys answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      yield* owner.apiKeys.delete({ payload: { name: "default" } })
      yield* failsWith(owner.apiKeys.get({ query: {} }), "NotFound", /no API key/)
    }))

  it.effect("PUT creates an absent key (value shown once) and answers an existing one masked", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const created = yield* api.apiKeys.ensure({ payload: { companyId: tenant.companyId, name: "ensured" } })
      expect(created.apiKey).toMatch(/^plk_[0-9A-Za-z]{49}$/)
      const again = yield* api.apiKeys.ensure({ payload: { name: "ensured" } })
      expect(again).toEqual({ apiKey: masked(created.apiKey) })
      expect(yield* api.apiKeys.ensure({ payload: { companyId: tenant.companyId, name: "default" } })).toEqual({
        apiKey: masked(tenant.apiKey)
      })
      const ensured = yield* client({ apiKey: created.apiKey })
      expect((yield* ensured.me.get()).companyId).toBe(tenant.companyId)
    }))

  it.effect("DELETE removes the key for good (answers it masked); an unknown name answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const { apiKey } = yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "temporary" } })
      expect(yield* api.apiKeys.delete({ payload: { companyId: tenant.companyId, name: "temporary" } })).toEqual({
        apiKey: masked(apiKey)
      })
      yield* failsWith(Effect.flatMap(client({ apiKey }), (gone) => gone.me.get()), "Unauthorized")
      yield* failsWith(api.apiKeys.getByName({ params: { companyId: tenant.companyId, name: "temporary" } }), "NotFound")
      yield* failsWith(api.apiKeys.delete({ payload: { companyId: tenant.companyId, name: "temporary" } }), "NotFound")
      yield* failsWith(api.apiKeys.delete({ payload: { name: "never-existed" } }), "NotFound", "never-existed")
    }))

  it.effect("owners and admins manage keys; members and viewers get 403 saying which roles may", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      for (const role of ["admin", "owner"] as const) {
        const person = yield* addPerson(tenant, { companyRole: role })
        const api = yield* client({ apiKey: person.personalAccessKey, companyId: tenant.companyId })
        expect(yield* api.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(tenant.apiKey) })
        yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: `by-${role}` } })
      }
      for (const role of ["member", "viewer"] as const) {
        const person = yield* addPerson(tenant, { companyRole: role })
        const api = yield* client({ apiKey: person.personalAccessKey, companyId: tenant.companyId })
        const denied = new RegExp(`Your role \\(${role}\\) cannot manage the company's API keys; it needs one of: owner, admin`)
        yield* failsWith(api.apiKeys.get({ query: {} }), "Forbidden", denied)
        yield* failsWith(api.apiKeys.getByName({ params: { companyId: tenant.companyId, name: "default" } }), "Forbidden", denied)
        yield* failsWith(api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "mine" } }), "Forbidden", denied)
        yield* failsWith(api.apiKeys.ensure({ payload: { name: "default" } }), "Forbidden", denied)
        yield* failsWith(api.apiKeys.delete({ payload: { name: "default" } }), "Forbidden", denied)
      }
      const owner = yield* client({ apiKey: tenant.apiKey })
      expect(yield* owner.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(tenant.apiKey) })
    }))

  it.effect("another company's id answers 404 on every operation, and changes nothing there", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const notFound = `Company ${other.companyId} not found`
      // A company key naming the other company, and a personal key of a user who does not belong to it.
      const callers = [{ apiKey: tenant.apiKey }, { apiKey: tenant.personalAccessKey, companyId: other.companyId }]
      for (const caller of callers) {
        const api = yield* client(caller)
        yield* failsWith(api.apiKeys.get({ query: { companyId: other.companyId } }), "NotFound", notFound)
        yield* failsWith(api.apiKeys.getByName({ params: { companyId: other.companyId, name: "default" } }), "NotFound")
        yield* failsWith(api.apiKeys.create({ payload: { companyId: other.companyId, name: "intruder" } }), "NotFound")
        yield* failsWith(api.apiKeys.ensure({ payload: { companyId: other.companyId, name: "intruder" } }), "NotFound")
        yield* failsWith(api.apiKeys.delete({ payload: { companyId: other.companyId, name: "default" } }), "NotFound")
      }
      const otherApi = yield* client({ apiKey: other.apiKey })
      expect(yield* otherApi.apiKeys.get({ query: {} })).toEqual({ apiKey: masked(other.apiKey) })
      yield* failsWith(otherApi.apiKeys.getByName({ params: { companyId: other.companyId, name: "intruder" } }), "NotFound")
    }))
})
