import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, getWithKey, postJson, send } from "../../support/Http.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

let counter = 0
const email = (name: string) => `${name}-${Date.now()}-${counter++}@example.com`

/** A tenant whose company has `count` members besides its owner, named Person 00, Person 01, … */
const companyOf = (count: number) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant()
    for (let i = 0; i < count; i++) {
      yield* addPerson(tenant, { companyRole: "member", displayName: `Person ${String(i).padStart(2, "0")}` })
    }
    return tenant
  })

const personalClient = (tenant: Tenant, personalAccessKey: string) => client({ apiKey: personalAccessKey, companyId: tenant.companyId })

it.layer(testServer(pgliteStorage))("company users (/api/v0/company_users)", (it) => {
  it.effect("GET answers the spec's envelope, 10 per page by default", () =>
    Effect.gen(function*() {
      const tenant = yield* companyOf(11)
      const api = yield* client({ apiKey: tenant.apiKey })
      const first = yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: {} })
      expect(first.pagination).toEqual({ page: 1, per_page: 10, total: 12, pages: 2, has_next: true, has_prev: false })
      expect(first.company_users).toHaveLength(10)
      expect(first.company_users[0]).toEqual({
        id: expect.stringMatching(/^cu_/),
        companyId: tenant.companyId,
        uid: tenant.userId,
        email: expect.stringContaining("@example.com"),
        role: "owner",
        displayName: "",
        photo: "",
        allowedFeatures: [],
        createdDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/)
      })
      const second = yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: { page: 2 } })
      expect(second.pagination).toEqual({ page: 2, per_page: 10, total: 12, pages: 2, has_next: false, has_prev: true })
      expect(second.company_users.map((user) => user.displayName)).toEqual(["Person 09", "Person 10"])
      const beyond = yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: { page: 3 } })
      expect(beyond.company_users).toEqual([])
      expect(beyond.pagination).toMatchObject({ total: 12, has_next: false, has_prev: true })
    }))

  it.effect("pageSize goes from 1 to 50; 0, 51 and non-numbers answer 400", () =>
    Effect.gen(function*() {
      const tenant = yield* companyOf(2)
      const api = yield* client({ apiKey: tenant.apiKey })
      const list = (pageSize: number) => api.companyUsers.list({ params: { companyId: tenant.companyId }, query: { pageSize } })
      expect((yield* list(1)).pagination).toEqual({ page: 1, per_page: 1, total: 3, pages: 3, has_next: true, has_prev: false })
      expect((yield* list(50)).pagination).toMatchObject({ per_page: 50, pages: 1 })
      for (const query of ["pageSize=0", "pageSize=51", "pageSize=ten", "pageSize=2.5", "page=0", "page=-1"]) {
        const response = yield* send(
          getWithKey(`/api/v0/company_users/${tenant.companyId}?${query}`, tenant.apiKey)
        )
        expectErrorResponse(response, 400, query.startsWith("page=") ? "\"page\"" : "\"pageSize\"")
      }
    }))

  it.effect("search matches name or email, case-insensitively, and pages the matches", () =>
    Effect.gen(function*() {
      const tenant = yield* companyOf(12)
      const api = yield* client({ apiKey: tenant.apiKey })
      const search = (text: string, query: { page?: number; pageSize?: number } = {}) =>
        api.companyUsers.list({ params: { companyId: tenant.companyId }, query: { search: text, ...query } })
      const byName = yield* search("person 1")
      expect(byName.company_users.map((user) => user.displayName)).toEqual(["Person 10", "Person 11"])
      expect(byName.pagination.total).toBe(2)
      const byEmail = yield* search("PERSON-")
      expect(byEmail.pagination.total).toBe(12)
      const paged = yield* search("person", { page: 3, pageSize: 5 })
      expect(paged.company_users.map((user) => user.displayName)).toEqual(["Person 10", "Person 11"])
      expect(paged.pagination).toEqual({ page: 3, per_page: 5, total: 12, pages: 3, has_next: false, has_prev: true })
      expect((yield* search("%")).pagination.total).toBe(0)
      expect((yield* search("nobody")).company_users).toEqual([])
    }))

  it.effect("every role of the company may list; another company's id answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
      const api = yield* personalClient(tenant, viewer.personalAccessKey)
      expect((yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: {} })).pagination.total).toBe(2)
      const companyKey = yield* client({ apiKey: tenant.apiKey })
      yield* failsWith(companyKey.companyUsers.list({ params: { companyId: other.companyId }, query: {} }), "NotFound", other.companyId)
      yield* failsWith(companyKey.companyUsers.list({ params: { companyId: "cmp_missing" }, query: {} }), "NotFound")
    }))

  it.effect("POST adds a person by email, creating the user when new and reusing an existing one", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const api = yield* client({ apiKey: tenant.apiKey })
      const fresh = email("fresh")
      const [added, response] = yield* api.companyUsers.add({
        params: { companyId: tenant.companyId },
        payload: { email: fresh, role: "member", displayName: "Fresh Face", allowedFeatures: ["chat"] },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(added).toMatchObject({ companyId: tenant.companyId, email: fresh, role: "member", displayName: "Fresh Face", allowedFeatures: ["chat"] })
      // Someone who already works for another company, named by email in another case: the same user.
      const known = yield* addPerson(other, { companyRole: "member" })
      const reused = yield* api.companyUsers.add({
        params: { companyId: tenant.companyId },
        payload: { email: known.email.toUpperCase(), role: "viewer" }
      })
      expect(reused).toMatchObject({ uid: known.userId, email: known.email, role: "viewer" })
      yield* failsWith(
        api.companyUsers.add({ params: { companyId: tenant.companyId }, payload: { email: fresh.toUpperCase(), role: "admin" } }),
        "BadRequest",
        "already belongs"
      )
    }))

  it.effect("POST checks its body: email, role (400 naming the field)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const post = (body: unknown) => send(postJson(`/api/v0/company_users/${tenant.companyId}`, body, tenant.apiKey))
      expectErrorResponse(yield* post({ email: "not-an-email", role: "member" }), 400, "\"email\"")
      expectErrorResponse(yield* post({ email: email("x"), role: "boss" }), 400, "\"role\"")
      expectErrorResponse(yield* post({ role: "member" }), 400, "\"email\"")
      expectErrorResponse(yield* post({ email: email("x"), role: "member", allowedFeatures: [""] }), 400, "\"allowedFeatures.0\"")
    }))

  it.effect("only an owner grants the owner role; members and viewers manage nobody (403 saying why)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const admin = yield* addPerson(tenant, { companyRole: "admin" })
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const adminApi = yield* personalClient(tenant, admin.personalAccessKey)
      // A company key made by the admin has the admin's powers.
      const adminsKey = yield* client({ apiKey: yield* companyKeyBy(tenant, admin.userId) })
      const params = { companyId: tenant.companyId }
      for (const api of [adminApi, adminsKey]) {
        yield* failsWith(api.companyUsers.add({ params, payload: { email: email("o"), role: "owner" } }), "Forbidden", "Only a company owner can add an owner")
        yield* failsWith(
          api.companyUsers.update({ params: { ...params, userId: member.userId }, payload: { role: "owner" } }),
          "Forbidden",
          "Only a company owner can grant the owner role"
        )
      }
      const added = yield* adminApi.companyUsers.add({ params, payload: { email: email("a"), role: "admin" } })
      expect(added.role).toBe("admin")
      const memberApi = yield* personalClient(tenant, member.personalAccessKey)
      const denied = /Your role \(member\) cannot add, change or remove company users; it needs one of: owner, admin/
      yield* failsWith(memberApi.companyUsers.add({ params, payload: { email: email("m"), role: "viewer" } }), "Forbidden", denied)
      yield* failsWith(memberApi.companyUsers.update({ params: { ...params, userId: admin.userId }, payload: { role: "viewer" } }), "Forbidden", denied)
      yield* failsWith(memberApi.companyUsers.remove({ params: { ...params, userId: admin.userId } }), "Forbidden", denied)
      const owner = yield* personalClient(tenant, tenant.personalAccessKey)
      const promoted = yield* owner.companyUsers.add({ params, payload: { email: email("co-owner"), role: "owner" } })
      expect(promoted.role).toBe("owner")
    }))

  it.effect("PATCH changes role and allowed features separately; admins cannot touch an owner", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const admin = yield* addPerson(tenant, { companyRole: "admin" })
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const adminApi = yield* personalClient(tenant, admin.personalAccessKey)
      const target = { companyId: tenant.companyId, userId: member.userId }
      const narrowed = yield* adminApi.companyUsers.update({ params: target, payload: { allowedFeatures: ["chat", "projects"] } })
      expect(narrowed).toMatchObject({ role: "member", allowedFeatures: ["chat", "projects"] })
      const demoted = yield* adminApi.companyUsers.update({ params: target, payload: { role: "viewer" } })
      expect(demoted).toMatchObject({ role: "viewer", allowedFeatures: ["chat", "projects"] })
      const owner = { companyId: tenant.companyId, userId: tenant.userId }
      yield* failsWith(adminApi.companyUsers.update({ params: owner, payload: { role: "member" } }), "Forbidden", "Only a company owner can change an owner")
      yield* failsWith(adminApi.companyUsers.update({ params: owner, payload: { allowedFeatures: [] } }), "Forbidden", "change an owner")
      yield* failsWith(adminApi.companyUsers.remove({ params: owner }), "Forbidden", "Only a company owner can remove an owner")
      yield* failsWith(adminApi.companyUsers.update({ params: { ...target, userId: "usr_missing" }, payload: { role: "member" } }), "NotFound")
    }))

  it.effect("the last owner can be neither demoted nor removed; with two owners one may go", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const owner = yield* personalClient(tenant, tenant.personalAccessKey)
      const self = { companyId: tenant.companyId, userId: tenant.userId }
      yield* failsWith(owner.companyUsers.update({ params: self, payload: { role: "admin" } }), "BadRequest", "The last owner of a company cannot be removed or demoted")
      yield* failsWith(owner.companyUsers.remove({ params: self }), "BadRequest", "last owner")
      // Staying owner is no demotion, and features may change.
      expect((yield* owner.companyUsers.update({ params: self, payload: { role: "owner", allowedFeatures: ["chat"] } })).role).toBe("owner")
      const second = yield* addPerson(tenant, { companyRole: "owner" })
      const demoted = yield* owner.companyUsers.update({ params: { ...self, userId: second.userId }, payload: { role: "member" } })
      expect(demoted.role).toBe("member")
      yield* owner.companyUsers.update({ params: { ...self, userId: second.userId }, payload: { role: "owner" } })
      const removed = yield* owner.companyUsers.remove({ params: { ...self, userId: second.userId } })
      expect(removed).toMatchObject({ uid: second.userId, role: "owner" })
      yield* failsWith(owner.companyUsers.remove({ params: self }), "BadRequest", "last owner")
    }))

  it.effect("DELETE removes a company user and answers it; an unknown user answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const api = yield* client({ apiKey: tenant.apiKey })
      const params = { companyId: tenant.companyId, userId: member.userId }
      expect(yield* api.companyUsers.remove({ params })).toMatchObject({ uid: member.userId, role: "member", email: member.email })
      yield* failsWith(api.companyUsers.remove({ params }), "NotFound", member.userId)
      expect((yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: {} })).pagination.total).toBe(1)
    }))

  it.effect("another company's id, or a user of another company, answers 404 and changes nothing", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const stranger = yield* addPerson(other, { companyRole: "member" })
      const api = yield* client({ apiKey: tenant.apiKey })
      const elsewhere = { companyId: other.companyId, userId: stranger.userId }
      yield* failsWith(api.companyUsers.add({ params: { companyId: other.companyId }, payload: { email: email("x"), role: "member" } }), "NotFound", other.companyId)
      yield* failsWith(api.companyUsers.update({ params: elsewhere, payload: { role: "viewer" } }), "NotFound", other.companyId)
      yield* failsWith(api.companyUsers.remove({ params: elsewhere }), "NotFound", other.companyId)
      const strangerHere = { companyId: tenant.companyId, userId: stranger.userId }
      yield* failsWith(api.companyUsers.update({ params: strangerHere, payload: { role: "viewer" } }), "NotFound", stranger.userId)
      yield* failsWith(api.companyUsers.remove({ params: strangerHere }), "NotFound", stranger.userId)
      const otherApi = yield* client({ apiKey: other.apiKey })
      const still = yield* otherApi.companyUsers.list({ params: { companyId: other.companyId }, query: {} })
      expect(still.company_users.map((user) => [user.uid, user.role])).toEqual([[other.userId, "owner"], [stranger.userId, "member"]])
    }))
})
