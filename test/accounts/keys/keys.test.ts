import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Admin from "../../../src/accounts/admin/Admin.ts"
import { failsWith, masked } from "../../support/Assertions.ts"
import { addPerson, client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"


it.layer(testServer(pgliteStorage))("the Keys area (/api/v0/keys)", (it) => {
  it.effect("POST creates a personal access key for the caller, shown once, that works at once", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const expiresAt = new Date(Date.now() + 7 * 86_400_000)
      const [created, response] = yield* api.keys.create({
        payload: { name: "laptop", expiresAt },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(created).toEqual({ id: expect.stringMatching(/^pka_/), name: "laptop", key: expect.stringMatching(/^pak_/), expiresAt })
      const laptop = yield* client({ apiKey: created.key, companyId: tenant.companyId })
      expect(yield* laptop.me.get()).toMatchObject({ keyKind: "personal", keyId: created.id, userId: tenant.userId })
      const lasting = yield* api.keys.create({ payload: { name: "no expiry" } })
      expect(lasting.expiresAt).toBeNull()
    }))

  it.effect("POST with a past expiry answers 400; a company key has no personal keys (403)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      yield* failsWith(api.keys.create({ payload: { name: "old", expiresAt: new Date(Date.now() - 1_000) } }), "BadRequest", "expiresAt")
      const companyKey = yield* client({ apiKey: tenant.apiKey })
      yield* failsWith(companyKey.keys.create({ payload: { name: "x" } }), "Forbidden", /personal access key/)
      yield* failsWith(companyKey.keys.revoke({ params: { keyId: "pka_x" } }), "Forbidden", /personal access key/)
    }))

  it.effect("GET lists the caller's personal keys and the company keys it may manage, masked only", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      // The owner is a mere member of the other company: its keys are not the owner's to see.
      yield* Effect.orDie(Admin.addCompanyUser(other.companyId, { userId: tenant.userId, role: "member" }))
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const created = yield* api.keys.create({ payload: { name: "laptop" } })
      const { apiKey: ci } = yield* api.apiKeys.create({ payload: { companyId: tenant.companyId, name: "ci" } })
      const listing = yield* api.keys.list()
      expect(listing.personalAccessKeys.map((key) => [key.name, key.maskedKey])).toEqual([
        ["bootstrap", masked(tenant.personalAccessKey)],
        ["laptop", masked(created.key)]
      ])
      expect(listing.companyKeys.map((key) => [key.companyId, key.name, key.maskedKey])).toEqual([
        [tenant.companyId, "default", masked(tenant.apiKey)],
        [tenant.companyId, "ci", masked(ci)]
      ])
      const text = JSON.stringify(listing)
      for (const secret of [tenant.personalAccessKey, created.key, tenant.apiKey, ci, other.apiKey]) expect(text).not.toContain(secret)
    }))

  it.effect("GET with a company key lists its company's keys; a member's personal key lists only its own keys", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const companyKey = yield* client({ apiKey: tenant.apiKey })
      expect(yield* companyKey.keys.list()).toEqual({
        personalAccessKeys: [],
        companyKeys: [expect.objectContaining({
          companyId: tenant.companyId,
          createdByUserId: tenant.userId,
          name: "default",
          maskedKey: masked(tenant.apiKey)
        })]
      })
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const memberApi = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      const listing = yield* memberApi.keys.list()
      expect(listing.companyKeys).toEqual([])
      expect(listing.personalAccessKeys.map((key) => key.maskedKey)).toEqual([masked(member.personalAccessKey)])
    }))

  it.effect("DELETE revokes one of the caller's keys and answers it masked; unknown or another user's key answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const created = yield* api.keys.create({ payload: { name: "laptop" } })
      const revoked = yield* api.keys.revoke({ params: { keyId: created.id } })
      expect(revoked).toMatchObject({ id: created.id, name: "laptop", maskedKey: masked(created.key), expiresAt: null })
      yield* failsWith(api.keys.revoke({ params: { keyId: created.id } }), "NotFound", created.id)
      yield* failsWith(api.keys.revoke({ params: { keyId: "pka_missing" } }), "NotFound")

      const colleague = yield* addPerson(tenant, { companyRole: "owner" })
      const colleagueApi = yield* client({ apiKey: colleague.personalAccessKey, companyId: tenant.companyId })
      const theirs = yield* colleagueApi.keys.create({ payload: { name: "theirs" } })
      yield* failsWith(api.keys.revoke({ params: { keyId: theirs.id } }), "NotFound", theirs.id)
      expect((yield* Effect.flatMap(client({ apiKey: theirs.key, companyId: tenant.companyId }), (still) => still.me.get())).keyId)
        .toBe(theirs.id)
    }))
})
