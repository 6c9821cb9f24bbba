import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"

it.layer(testServer(pgliteStorage))("agents API", (it) => {
  it.effect("agents are created active, listed with page and pageSize, and updated field by field", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const agent = yield* api.agents.create({
        payload: { name: "Scout", description: "Finds leads", instructions: "Be precise", model: "local-fastest" }
      })
      expect(agent).toMatchObject({
        companyId: tenant.companyId,
        name: "Scout",
        description: "Finds leads",
        instructions: "Be precise",
        model: "local-fastest",
        status: "active"
      })
      const bare = yield* api.agents.create({ payload: { name: "Helper" } })
      expect(bare).toMatchObject({ description: "", instructions: "", model: null, status: "active" })

      const page = yield* api.agents.list({ query: { pageSize: 1 } })
      expect(page).toMatchObject({ total: 2, pages: 2, hasNext: true, page: 1, pageSize: 1 })
      expect(page.items.map((a) => a.name)).toEqual(["Helper"])

      const paused = yield* api.agents.update({ params: { agent_id: agent.id }, payload: { status: "paused", model: null } })
      expect(paused).toMatchObject({ status: "paused", model: null, name: "Scout", instructions: "Be precise" })
      expect(paused.updatedDate.getTime()).toBeGreaterThan(agent.updatedDate.getTime())
      expect(paused.createdDate).toEqual(agent.createdDate)
      expect(yield* api.agents.get({ params: { agent_id: agent.id } })).toEqual(paused)
    }))

  it.effect("members read agents; only managers create and change them", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const agent = yield* (yield* client({ apiKey: tenant.apiKey })).agents.create({ payload: { name: "Scout" } })
      const api = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      expect((yield* api.agents.get({ params: { agent_id: agent.id } })).name).toBe("Scout")
      expect((yield* Effect.flip(api.agents.create({ payload: { name: "x" } })))._tag).toBe("Forbidden")
      expect((yield* Effect.flip(api.agents.update({ params: { agent_id: agent.id }, payload: { name: "x" } })))._tag)
        .toBe("Forbidden")
    }))

  it.effect("another company's agent answers 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const theirs = yield* (yield* client({ apiKey: other.apiKey })).agents.create({ payload: { name: "Theirs" } })
      const api = yield* client({ apiKey: tenant.apiKey })
      for (const agent_id of [theirs.id, "agt_unknown"]) {
        expect((yield* Effect.flip(api.agents.get({ params: { agent_id } })))._tag).toBe("NotFound")
        expect((yield* Effect.flip(api.agents.update({ params: { agent_id }, payload: { name: "x" } })))._tag)
          .toBe("NotFound")
      }
      expect((yield* api.agents.list({ query: {} })).total).toBe(0)
    }))

  it.effect("bad input answers 400 naming the field", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const agent = yield* (yield* client({ apiKey: tenant.apiKey })).agents.create({ payload: { name: "Scout" } })
      const cases = [
        ["POST", "/api/v0/agents", { description: "no name" }, "name"],
        ["POST", "/api/v0/agents", { name: "x", model: "" }, "model"],
        ["PATCH", `/api/v0/agents/${agent.id}`, { status: "deleted" }, "status"],
        ["GET", "/api/v0/agents?page=0", undefined, "page"],
        // A model is checked against the catalog when it is named, not when an agent first runs.
        ["POST", "/api/v0/agents", { name: "x", model: "gpt-typo" }, /Unknown model "gpt-typo"/],
        ["PATCH", `/api/v0/agents/${agent.id}`, { model: "gpt-typo" }, /Unknown model "gpt-typo"/],
        ["POST", "/api/v0/employees", { name: "x", role: "Writer", model: "gpt-typo" }, /Unknown model "gpt-typo"/]
      ] as const
      for (const [method, path, body, field] of cases) {
        const response = yield* send(requestWithKey(method, path, tenant.apiKey, body))
        expectErrorResponse(response, 400, field)
      }
    }))
})

it.layer(testServer(pgliteStorage))("employees API", (it) => {
  it.effect("employees are personas of the company", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const employee = yield* api.employees.create({
        payload: { name: "Ada", role: "Research analyst", instructions: "Cite sources" }
      })
      expect(employee).toMatchObject({
        companyId: tenant.companyId,
        name: "Ada",
        role: "Research analyst",
        instructions: "Cite sources",
        model: null
      })
      expect(yield* api.employees.get({ params: { employee_id: employee.id } })).toEqual(employee)
      const page = yield* api.employees.list({ query: {} })
      expect(page).toMatchObject({ total: 1, pages: 1, hasNext: false })
      expect(page.items).toEqual([employee])
    }))

  it.effect("another company's employee answers 404, and bad input 400", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const theirs = yield* (yield* client({ apiKey: other.apiKey })).employees.create({
        payload: { name: "Bob", role: "Writer" }
      })
      const api = yield* client({ apiKey: tenant.apiKey })
      for (const employee_id of [theirs.id, "emp_unknown"]) {
        expect((yield* Effect.flip(api.employees.get({ params: { employee_id } })))._tag).toBe("NotFound")
      }
      const badPage = yield* send(requestWithKey("GET", "/api/v0/employees?page=-1", tenant.apiKey))
      expectErrorResponse(badPage, 400, "page")
      const response = yield* send(requestWithKey("POST", "/api/v0/employees", tenant.apiKey, { name: "x" }))
      expectErrorResponse(response, 400, "role")
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const asMember = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      expect((yield* Effect.flip(asMember.employees.create({ payload: { name: "x", role: "y" } })))._tag).toBe("Forbidden")
    }))
})
