import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { vi } from "vitest"
import * as Admin from "../../src/accounts/admin/Admin.ts"
import { generateKey } from "../../src/accounts/keys/KeyFormat.ts"
import { KeysRepo } from "../../src/accounts/keys/KeysRepo.ts"
import { failsWith } from "../support/Assertions.ts"
import { expectErrorResponse, getWithKey, send } from "../support/Http.ts"
import { addPerson, backends, client, pgliteStorage, postgresUrl, seedTenant, serversSharingPostgres, testServer } from "../support/TestServer.ts"

/** The same key with its checksum broken: well formed, but mistyped. */
const withBadChecksum = (key: string) => key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")

/** A personal access key stored with an expiry in the past. */
const expiredPersonalKey = (userId: string) =>
  Effect.gen(function*() {
    const generated = generateKey("personal")
    yield* KeysRepo.use((keys) =>
      keys.createPersonalKey({
        userId,
        name: "expired",
        keyHash: generated.hash,
        masked: generated.masked,
        expiresAt: new Date(Date.now() - 60_000)
      })
    )
    return generated.plaintext
  })

/** Runs `effect` with the wall clock (Date) moved `ms` ahead, then puts it back. */
const later = <A, E, R>(ms: number, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => vi.setSystemTime(Date.now() + ms)),
    () => effect,
    () => Effect.sync(() => vi.useRealTimers())
  )

describe.each(backends)("authentication and tenancy on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("a company key works in X-API-Key and in Authorization: Bearer", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        for (const scheme of ["x-api-key", "bearer"] as const) {
          const api = yield* client({ apiKey: tenant.apiKey, scheme })
          expect(yield* api.me.get()).toMatchObject({ keyKind: "company", companyId: tenant.companyId, userId: tenant.userId })
        }
      }))

    it.effect("a personal access key works in either header, with X-Company-ID or the companyId query", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        for (const scheme of ["x-api-key", "bearer"] as const) {
          const viaHeader = yield* client({ apiKey: tenant.personalAccessKey, scheme, companyId: tenant.companyId })
          const viaQuery = yield* client({ apiKey: tenant.personalAccessKey, scheme, companyIdQuery: tenant.companyId })
          for (const api of [viaHeader, viaQuery]) {
            expect(yield* api.me.get()).toMatchObject({
              keyKind: "personal",
              companyId: tenant.companyId,
              userId: tenant.userId,
              role: "owner"
            })
          }
        }
        // Header and query may both name the company, as long as they agree.
        const both = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId, companyIdQuery: tenant.companyId })
        expect((yield* both.me.get()).companyId).toBe(tenant.companyId)
      }))

    it.effect("a personal access key without the company id answers 401", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        for (const scheme of ["x-api-key", "bearer"] as const) {
          const api = yield* client({ apiKey: tenant.personalAccessKey, scheme })
          yield* failsWith(api.me.get(), "Unauthorized", /company id/)
        }
      }))

    it.effect("a missing, unknown or malformed key answers 401", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        yield* failsWith(Effect.flatMap(client(), (api) => api.me.get()), "Unauthorized", /Missing API key/)
        const candidates = [
          generateKey("company").plaintext,
          generateKey("personal").plaintext,
          withBadChecksum(tenant.apiKey),
          withBadChecksum(tenant.personalAccessKey),
          tenant.apiKey.slice(0, -1),
          "not-a-key"
        ]
        for (const key of candidates) {
          for (const scheme of ["x-api-key", "bearer"] as const) {
            const api = yield* client({ apiKey: key, scheme, companyId: tenant.companyId })
            yield* failsWith(api.me.get(), "Unauthorized", /^Invalid API key$/)
          }
        }
        for (const authorization of ["Bearer", "Bearer ", `Basic ${tenant.apiKey}`, tenant.apiKey]) {
          const response = yield* send(HttpClientRequest.get("/api/v0/me").pipe(HttpClientRequest.setHeader("authorization", authorization)))
          expectErrorResponse(response, 401)
        }
        expectErrorResponse(yield* send(getWithKey("/api/v0/me", " ")), 401)
      }))

    it.effect("an expired personal access key answers 401", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const expired = yield* expiredPersonalKey(tenant.userId)
        const api = yield* client({ apiKey: expired, companyId: tenant.companyId })
        yield* failsWith(api.me.get(), "Unauthorized", /expired/)
      }))

    it.effect("a personal access key stops working when it expires, even after it was just used", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        const created = yield* owner.keys.create({ payload: { name: "short", expiresAt: new Date(Date.now() + 3_600_000) } })
        const api = yield* client({ apiKey: created.key, companyId: tenant.companyId })
        expect((yield* api.me.get()).keyId).toBe(created.id)
        yield* later(3_600_001, failsWith(api.me.get(), "Unauthorized", /expired/))
        // Back at the present, the key works again: the clock alone decided.
        expect((yield* api.me.get()).keyId).toBe(created.id)
      }))

    it.effect("a company key deleted through DELETE /api_keys fails on the very next request", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const admin = yield* client({ apiKey: tenant.apiKey })
        const { apiKey: second } = yield* admin.apiKeys.create({ payload: { companyId: tenant.companyId, name: "second" } })
        const api = yield* client({ apiKey: second })
        expect((yield* api.me.get()).companyId).toBe(tenant.companyId)
        yield* admin.apiKeys.delete({ payload: { companyId: tenant.companyId, name: "second" } })
        yield* failsWith(api.me.get(), "Unauthorized")
        expect((yield* admin.me.get()).companyId).toBe(tenant.companyId)
      }))

    it.effect("a personal access key revoked through DELETE /keys/{keyId} fails on the very next request", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        const created = yield* owner.keys.create({ payload: { name: "laptop" } })
        const api = yield* client({ apiKey: created.key, companyId: tenant.companyId })
        expect((yield* api.me.get()).keyId).toBe(created.id)
        yield* owner.keys.revoke({ params: { keyId: created.id } })
        yield* failsWith(api.me.get(), "Unauthorized")
        // A key can revoke itself; the request after that fails.
        const me = yield* owner.me.get()
        yield* owner.keys.revoke({ params: { keyId: me.keyId } })
        yield* failsWith(owner.me.get(), "Unauthorized")
      }))

    it.effect("losing or changing company access applies on the very next request", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const person = yield* addPerson(tenant, { companyRole: "member" })
        const api = yield* client({ apiKey: person.personalAccessKey, companyId: tenant.companyId })
        expect((yield* api.me.get()).role).toBe("member")
        const owner = yield* client({ apiKey: tenant.apiKey })
        yield* owner.companyUsers.update({ params: { companyId: tenant.companyId, userId: person.userId }, payload: { role: "viewer" } })
        expect((yield* api.me.get()).role).toBe("viewer")
        yield* owner.companyUsers.remove({ params: { companyId: tenant.companyId, userId: person.userId } })
        yield* failsWith(api.me.get(), "NotFound", tenant.companyId)
      }))

    it.effect("a personal access key reaches every company of its user, and no other (404)", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const stranger = yield* client({ apiKey: tenant.personalAccessKey, companyId: other.companyId })
        yield* failsWith(stranger.me.get(), "NotFound", `Company ${other.companyId} not found`)
        const missing = yield* client({ apiKey: tenant.personalAccessKey, companyId: "cmp_missing" })
        yield* failsWith(missing.me.get(), "NotFound")
        yield* Effect.orDie(Admin.addCompanyUser(other.companyId, { userId: tenant.userId, role: "viewer" }))
        const member = yield* client({ apiKey: tenant.personalAccessKey, companyId: other.companyId })
        expect(yield* member.me.get()).toMatchObject({ companyId: other.companyId, role: "viewer", userId: tenant.userId })
      }))

    it.effect("a company key with another company's id in header, query, body or path answers 404", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const viaHeader = yield* client({ apiKey: tenant.apiKey, companyId: other.companyId })
        yield* failsWith(viaHeader.me.get(), "NotFound", other.companyId)
        const viaQuery = yield* client({ apiKey: tenant.apiKey, companyIdQuery: other.companyId })
        yield* failsWith(viaQuery.me.get(), "NotFound", other.companyId)
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* failsWith(api.apiKeys.get({ query: { companyId: other.companyId } }), "NotFound", other.companyId)
        yield* failsWith(api.apiKeys.create({ payload: { companyId: other.companyId, name: "sneaky" } }), "NotFound", other.companyId)
        yield* failsWith(api.companyUsers.list({ params: { companyId: other.companyId }, query: {} }), "NotFound", other.companyId)
        // Its own company id, named anywhere, is fine.
        const own = yield* client({ apiKey: tenant.apiKey, companyId: tenant.companyId })
        expect((yield* own.me.get()).companyId).toBe(tenant.companyId)
        expect((yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: {} })).pagination.total).toBe(1)
      }))

    it.effect("a company key acts as the user who created it, with that user's current role, until they leave", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const admin = yield* addPerson(tenant, { companyRole: "admin" })
        const adminPersonal = yield* client({ apiKey: admin.personalAccessKey, companyId: tenant.companyId })
        const { apiKey } = yield* adminPersonal.apiKeys.create({ payload: { name: "admins-integration" } })
        const adminsKey = yield* client({ apiKey })
        expect(yield* adminsKey.me.get()).toMatchObject({ keyKind: "company", userId: admin.userId, role: "admin" })
        const project = yield* adminsKey.projects.create({ payload: { name: "Integration" } })
        expect(project).toMatchObject({ uid: admin.userId, sharing: "Shared" })
        // Without companyId a company key creates the key for its own company, acting as the same user.
        const derived = yield* adminsKey.apiKeys.create({ payload: { name: "derived" } })
        const derivedKey = yield* client({ apiKey: derived.apiKey })
        expect(yield* derivedKey.me.get()).toMatchObject({ companyId: tenant.companyId, userId: admin.userId })

        const owner = yield* client({ apiKey: tenant.apiKey })
        const target = { companyId: tenant.companyId, userId: admin.userId }
        yield* owner.companyUsers.update({ params: target, payload: { role: "member" } })
        expect((yield* adminsKey.me.get()).role).toBe("member")
        yield* failsWith(adminsKey.apiKeys.create({ payload: { name: "more" } }), "Forbidden", /Your role \(member\)/)

        yield* owner.companyUsers.remove({ params: target })
        for (const key of [adminsKey, derivedKey]) {
          yield* failsWith(key.me.get(), "Unauthorized", /creator no longer belongs/)
        }
        expect((yield* owner.me.get()).userId).toBe(tenant.userId)
      }))

    it.effect("a company key naming another company than its own answers 404, even when it also names its own", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        for (const companyId of [undefined, tenant.companyId]) {
          const api = yield* client({ apiKey: tenant.apiKey, companyId })
          yield* failsWith(api.apiKeys.getByName({ params: { companyId: other.companyId, name: "default" } }), "NotFound")
          yield* failsWith(api.apiKeys.create({ payload: { companyId: other.companyId, name: "x" } }), "NotFound")
        }
      }))

    it.effect("a company the caller cannot reach answers 404 wherever the request names it, with either kind of key", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const unreachable = `Company ${other.companyId} not found`
        const personal = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        const companyKey = yield* client({ apiKey: tenant.apiKey, companyId: tenant.companyId })
        for (const api of [personal, companyKey]) {
          yield* failsWith(api.apiKeys.getByName({ params: { companyId: other.companyId, name: "default" } }), "NotFound", unreachable)
          yield* failsWith(api.apiKeys.create({ payload: { companyId: other.companyId, name: "x" } }), "NotFound", unreachable)
          yield* failsWith(api.projects.create({ payload: { companyId: other.companyId, name: "x" } }), "NotFound", unreachable)
          yield* failsWith(api.companyUsers.list({ params: { companyId: other.companyId }, query: {} }), "NotFound", unreachable)
        }
        for (const apiKey of [tenant.personalAccessKey, tenant.apiKey]) {
          const headerVsQuery = yield* client({ apiKey, companyId: tenant.companyId, companyIdQuery: other.companyId })
          yield* failsWith(headerVsQuery.me.get(), "NotFound", unreachable)
          const twoQueries = yield* send(getWithKey(`/api/v0/me?companyId=${tenant.companyId}&companyId=${other.companyId}`, apiKey))
          expectErrorResponse(twoQueries, 404, unreachable)
        }
      }))

    it.effect("two companies the personal key's user both belongs to, named at once, conflict (400)", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        yield* Effect.orDie(Admin.addCompanyUser(other.companyId, { userId: tenant.userId, role: "owner" }))
        const headerVsQuery = yield* client({
          apiKey: tenant.personalAccessKey,
          companyId: tenant.companyId,
          companyIdQuery: other.companyId
        })
        yield* failsWith(headerVsQuery.me.get(), "BadRequest", /Conflicting/)
        const twoQueries = yield* send(
          getWithKey(`/api/v0/me?companyId=${tenant.companyId}&companyId=${other.companyId}`, tenant.personalAccessKey)
        )
        expectErrorResponse(twoQueries, 400, /Conflicting/)
        const personal = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(personal.apiKeys.create({ payload: { companyId: other.companyId, name: "x" } }), "BadRequest", /Conflicting/)
        yield* failsWith(personal.apiKeys.ensure({ payload: { companyId: other.companyId, name: "x" } }), "BadRequest", /Conflicting/)
        yield* failsWith(
          personal.companyUsers.list({ params: { companyId: other.companyId }, query: {} }),
          "BadRequest",
          /Conflicting/
        )
        // The same ids with the company key: the other company is not its own, so it is not reachable.
        const companyKey = yield* client({ apiKey: tenant.apiKey, companyId: tenant.companyId, companyIdQuery: other.companyId })
        yield* failsWith(companyKey.me.get(), "NotFound", other.companyId)
      }))
  })
})

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

  it.effect("a company key whose creator leaves the company fails on the very next request to the other server", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const person = yield* Effect.provideContext(addPerson(tenant, { companyRole: "admin" }), first)
      const owner = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      const personal = yield* Effect.provideContext(
        client({ apiKey: person.personalAccessKey, companyId: tenant.companyId }),
        first
      )
      const { apiKey } = yield* personal.apiKeys.create({ payload: { name: "theirs" } })
      const elsewhere = yield* Effect.provideContext(client({ apiKey }), second)
      expect((yield* elsewhere.me.get()).role).toBe("admin")
      yield* owner.companyUsers.update({ params: { companyId: tenant.companyId, userId: person.userId }, payload: { role: "viewer" } })
      expect((yield* elsewhere.me.get()).role).toBe("viewer")
      yield* owner.companyUsers.remove({ params: { companyId: tenant.companyId, userId: person.userId } })
      yield* failsWith(elsewhere.me.get(), "Unauthorized", /creator no longer belongs/)
    }))
})

/** Memory storage whose keys repository counts lookups by hash. */
const lookups = { count: 0 }
const countingStorage = Layer.effect(
  KeysRepo,
  KeysRepo.useSync((keys) => ({
    ...keys,
    findCompanyKeyByHash: (hash) => Effect.suspend(() => (lookups.count++, keys.findCompanyKeyByHash(hash))),
    findPersonalKeyByHash: (hash) => Effect.suspend(() => (lookups.count++, keys.findPersonalKeyByHash(hash)))
  }))
).pipe(Layer.provideMerge(pgliteStorage))

it.layer(testServer(countingStorage))("unknown keys", (it) => {
  it.effect("a well-formed key no one has is looked up once, then refused without a lookup", () =>
    Effect.gen(function*() {
      const madeUp = yield* client({ apiKey: generateKey("company").plaintext })
      const before = lookups.count
      for (let attempt = 0; attempt < 5; attempt++) yield* failsWith(madeUp.me.get(), "Unauthorized", /^Invalid API key$/)
      expect(lookups.count - before).toBe(1)
    }))

  it.effect("a deleted key stays refused, and a new key still works at once", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const admin = yield* client({ apiKey: tenant.apiKey })
      const { apiKey } = yield* admin.apiKeys.create({ payload: { companyId: tenant.companyId, name: "short-lived" } })
      yield* admin.apiKeys.delete({ payload: { name: "short-lived" } })
      const deleted = yield* client({ apiKey })
      yield* failsWith(deleted.me.get(), "Unauthorized", /^Invalid API key$/)
      yield* failsWith(deleted.me.get(), "Unauthorized", /^Invalid API key$/)
      const { apiKey: fresh } = yield* admin.apiKeys.create({ payload: { companyId: tenant.companyId, name: "next" } })
      expect((yield* (yield* client({ apiKey: fresh })).me.get()).companyId).toBe(tenant.companyId)
    }))
})
