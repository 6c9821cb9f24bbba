import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"

it.layer(testServer(pgliteStorage))("memories API", (it) => {
  it.effect("a person keeps memories of their own in the company", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const mine = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const theirs = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      // A company key keeps the memories of its creator: here a third person, an admin.
      const admin = yield* addPerson(tenant, { companyRole: "admin" })
      const company = yield* client({ apiKey: yield* companyKeyBy(tenant, admin.userId) })
      const params = { companyId: tenant.companyId }
      const memory = yield* mine.memories.create({
        params,
        payload: { content: "Prefers short emails", metadata: { source: "chat" } }
      })
      expect(memory).toMatchObject({
        content: "Prefers short emails",
        category: "general",
        isActive: true,
        sourceChatId: null,
        sourceMessageId: null,
        metadata: { source: "chat" }
      })
      expect(memory.updated).toBe(memory.created)
      yield* theirs.memories.create({ params, payload: { content: "Likes tables", category: "style" } })
      yield* company.memories.create({ params, payload: { content: "Company tone: formal" } })

      expect((yield* mine.memories.list({ params, query: {} })).items.map((m) => m.content)).toEqual(["Prefers short emails"])
      expect((yield* theirs.memories.list({ params, query: {} })).items.map((m) => m.content)).toEqual(["Likes tables"])
      expect((yield* company.memories.list({ params, query: {} })).items.map((m) => m.content)).toEqual([
        "Company tone: formal"
      ])
      for (const other of [theirs, company]) {
        const params2 = { ...params, memory_id: memory.id }
        expect((yield* Effect.flip(other.memories.update({ params: params2, payload: { content: "x" } })))._tag).toBe(
          "NotFound"
        )
        expect((yield* Effect.flip(other.memories.delete({ params: params2 })))._tag).toBe("NotFound")
      }
    }))

  it.effect("the list envelope pages by 50, hides inactive memories unless asked, and filters by category", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const params = { companyId: tenant.companyId }
      for (let i = 0; i < 52; i++) {
        yield* api.memories.create({ params, payload: { content: `fact ${i}`, category: i % 2 === 0 ? "even" : "odd" } })
      }
      const first = yield* api.memories.list({ params, query: {} })
      expect(first).toMatchObject({ total: 52, page: 1, pageSize: 50 })
      expect(first.items).toHaveLength(50)
      expect(first.items[0].content).toBe("fact 51")
      const second = yield* api.memories.list({ params, query: { page: 2 } })
      expect(second.items.map((m) => m.content)).toEqual(["fact 1", "fact 0"])

      const retired = first.items[0]
      const patched = yield* api.memories.update({
        params: { ...params, memory_id: retired.id },
        payload: { isActive: false, category: "retired" }
      })
      expect(patched).toMatchObject({ isActive: false, category: "retired", content: "fact 51" })
      expect(patched.updated).toBeGreaterThan(retired.updated)
      expect((yield* api.memories.list({ params, query: {} })).total).toBe(51)
      expect((yield* api.memories.list({ params, query: { includeInactive: "true" } })).total).toBe(52)
      expect((yield* api.memories.list({ params, query: { includeInactive: "false" } })).total).toBe(51)
      const even = yield* api.memories.list({ params, query: { category: "even", pageSize: 5 } })
      expect(even).toMatchObject({ total: 26, pageSize: 5 })
      expect(even.items.every((m) => m.category === "even")).toBe(true)
      expect((yield* api.memories.list({ params, query: { category: "retired" } })).total).toBe(0)
      expect((yield* api.memories.list({ params, query: { category: "retired", includeInactive: "true" } })).total)
        .toBe(1)
    }))

  it.effect("DELETE removes the memory", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const params = { companyId: tenant.companyId }
      const memory = yield* api.memories.create({ params, payload: { content: "temporary" } })
      expect(yield* api.memories.delete({ params: { ...params, memory_id: memory.id } })).toEqual(memory)
      expect((yield* api.memories.list({ params, query: { includeInactive: "true" } })).total).toBe(0)
      const again = yield* Effect.flip(api.memories.delete({ params: { ...params, memory_id: memory.id } }))
      expect(again._tag).toBe("NotFound")
    }))

  it.effect("another company's id in the path answers 404 on every endpoint", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const theirs = yield* (yield* client({ apiKey: other.apiKey })).memories.create({
        params: { companyId: other.companyId },
        payload: { content: "secret" }
      })
      const api = yield* client({ apiKey: tenant.apiKey })
      const params = { companyId: other.companyId }
      const idParams = { ...params, memory_id: theirs.id }
      const failures = [
        yield* Effect.flip(api.memories.create({ params, payload: { content: "x" } })),
        yield* Effect.flip(api.memories.list({ params, query: {} })),
        yield* Effect.flip(api.memories.update({ params: idParams, payload: { content: "x" } })),
        yield* Effect.flip(api.memories.delete({ params: idParams }))
      ]
      expect(failures.map((error) => error._tag)).toEqual(["NotFound", "NotFound", "NotFound", "NotFound"])
      const ownPathOtherId = yield* Effect.flip(
        api.memories.update({ params: { companyId: tenant.companyId, memory_id: theirs.id }, payload: { content: "x" } })
      )
      expect(ownPathOtherId._tag).toBe("NotFound")
    }))

  it.effect("bad input answers 400 naming the field", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const base = `/api/v0/companies/${tenant.companyId}/memories`
      const memory = yield* api.memories.create({ params: { companyId: tenant.companyId }, payload: { content: "x" } })
      const cases = [
        ["POST", base, { content: "" }, "content"],
        ["POST", base, { content: "x", metadata: "flat" }, "metadata"],
        ["PATCH", `${base}/${memory.id}`, { isActive: "yes" }, "isActive"],
        ["PATCH", `${base}/${memory.id}`, { category: "" }, "category"],
        ["GET", `${base}?includeInactive=maybe`, undefined, "includeInactive"],
        ["GET", `${base}?pageSize=0`, undefined, "pageSize"],
        ["GET", `${base}?page=x`, undefined, "page"]
      ] as const
      for (const [method, path, body, field] of cases) {
        const response = yield* send(requestWithKey(method, path, tenant.apiKey, body))
        expectErrorResponse(response, 400, field)
      }
    }))

  it.effect("a viewer cannot keep memories", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
      const api = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
      const error = yield* Effect.flip(api.memories.list({ params: { companyId: tenant.companyId }, query: {} }))
      expect(error._tag).toBe("Forbidden")
    }))
})
