import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { departmentPrompt } from "../../../src/work/departments/Departments.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

describe.each(backends)("departments on $name", ({ storage }) => {
  it.layer(testServer(storage), { timeout: 60_000 })((it) => {
    it.effect("are created, listed, read, changed field by field and deleted", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const sales = yield* api.departments.create({
          payload: { name: "Sales", description: "Closes deals", instructions: "Always propose a next step." }
        })
        expect(sales).toMatchObject({
          companyId: tenant.companyId,
          name: "Sales",
          description: "Closes deals",
          instructions: "Always propose a next step."
        })
        const support = yield* api.departments.create({ payload: { name: "Support" } })
        expect(support).toMatchObject({ description: "", instructions: "" })

        const page = yield* api.departments.list({ query: { pageSize: 1 } })
        expect(page).toMatchObject({ total: 2, pages: 2, hasNext: true })
        expect(page.items.map((d) => d.name)).toEqual(["Support"])

        const changed = yield* api.departments.update({
          params: { departmentId: sales.id },
          payload: { instructions: "Quote prices in euros." }
        })
        expect(changed).toMatchObject({ name: "Sales", description: "Closes deals", instructions: "Quote prices in euros." })
        expect(changed.updated).toBeGreaterThan(sales.updated)
        expect(yield* api.departments.get({ params: { departmentId: sales.id } })).toEqual(changed)

        expect(yield* api.departments.delete({ params: { departmentId: sales.id } })).toEqual(changed)
        expect((yield* Effect.flip(api.departments.get({ params: { departmentId: sales.id } })))._tag).toBe("NotFound")
        expect((yield* api.departments.list({ query: {} })).total).toBe(1)
      }))

    it.effect("employees join a department of their company; its instructions make part of their prompt", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const sales = yield* api.departments.create({
          payload: { name: "Sales", description: "Closes deals", instructions: "Always propose a next step." }
        })
        const ada = yield* api.employees.create({ payload: { name: "Ada", role: "account executive", departmentId: sales.id } })
        expect(ada.departmentId).toBe(sales.id)
        const bob = yield* api.employees.create({ payload: { name: "Bob", role: "writer" } })
        expect(bob.departmentId).toBeNull()

        expect(yield* departmentPrompt(ada)).toBe(
          "You work in the Sales department.\nAbout the department: Closes deals\n" +
            "The department's instructions:\nAlways propose a next step."
        )
        expect(yield* departmentPrompt(bob)).toBe("")

        const moved = yield* api.employees.update({ params: { employee_id: bob.id }, payload: { departmentId: sales.id, role: "copywriter" } })
        expect(moved).toMatchObject({ departmentId: sales.id, role: "copywriter", name: "Bob" })
        const out = yield* api.employees.update({ params: { employee_id: bob.id }, payload: { departmentId: null } })
        expect(out.departmentId).toBeNull()
        expect((yield* api.employees.get({ params: { employee_id: bob.id } })).departmentId).toBeNull()

        // Deleting the department leaves its employees without one.
        yield* api.departments.delete({ params: { departmentId: sales.id } })
        const left = yield* api.employees.get({ params: { employee_id: ada.id } })
        expect(left.departmentId).toBeNull()
        expect(yield* departmentPrompt(left)).toBe("")
      }))

    it.effect("another company's department is 404 to read and 400 to join", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const theirs = yield* (yield* client({ apiKey: other.apiKey })).departments.create({ payload: { name: "Theirs" } })
        const api = yield* client({ apiKey: tenant.apiKey })
        for (const departmentId of [theirs.id, "dep_unknown"]) {
          expect((yield* Effect.flip(api.departments.get({ params: { departmentId } })))._tag).toBe("NotFound")
          expect((yield* Effect.flip(api.departments.update({ params: { departmentId }, payload: { name: "x" } })))._tag)
            .toBe("NotFound")
          expect((yield* Effect.flip(api.departments.delete({ params: { departmentId } })))._tag).toBe("NotFound")
        }
        expect((yield* api.departments.list({ query: {} })).total).toBe(0)
        const employee = yield* api.employees.create({ payload: { name: "Ada", role: "analyst" } })
        const joins = [
          requestWithKey("POST", "/api/v0/employees", tenant.apiKey, { name: "x", role: "y", departmentId: theirs.id }),
          requestWithKey("PATCH", `/api/v0/employees/${employee.id}`, tenant.apiKey, { departmentId: theirs.id })
        ]
        for (const request of joins) {
          expectErrorResponse(yield* send(request), 400, `departmentId: no department ${theirs.id} in this company`)
        }
        expect((yield* api.employees.get({ params: { employee_id: employee.id } })).departmentId).toBeNull()
        expect((yield* api.employees.list({ query: {} })).total).toBe(1)
        // Their department is untouched.
        expect((yield* (yield* client({ apiKey: other.apiKey })).departments.get({ params: { departmentId: theirs.id } })).name)
          .toBe("Theirs")
      }))

    it.effect("members read departments; only managers change them", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const member = yield* addPerson(tenant, { companyRole: "member" })
        const sales = yield* (yield* client({ apiKey: tenant.apiKey })).departments.create({ payload: { name: "Sales" } })
        const api = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
        expect((yield* api.departments.get({ params: { departmentId: sales.id } })).name).toBe("Sales")
        expect((yield* Effect.flip(api.departments.create({ payload: { name: "x" } })))._tag).toBe("Forbidden")
        expect((yield* Effect.flip(api.departments.update({ params: { departmentId: sales.id }, payload: { name: "x" } })))._tag)
          .toBe("Forbidden")
        expect((yield* Effect.flip(api.departments.delete({ params: { departmentId: sales.id } })))._tag).toBe("Forbidden")
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const sales = yield* (yield* client({ apiKey: tenant.apiKey })).departments.create({ payload: { name: "Sales" } })
        const cases = [
          ["POST", "/api/v0/departments", { description: "no name" }, "name"],
          ["POST", "/api/v0/departments", { name: "   " }, "name"],
          ["POST", "/api/v0/departments", { name: "x", nmae: "typo" }, "nmae"],
          ["POST", "/api/v0/departments", { name: "x", instructions: "a".repeat(50_001) }, "instructions"],
          ["PATCH", `/api/v0/departments/${sales.id}`, { description: 7 }, "description"],
          ["GET", "/api/v0/departments?pageSize=101", undefined, "pageSize"],
          ["POST", "/api/v0/employees", { name: "x", role: "y", departmentId: 5 }, "departmentId"]
        ] as const
        for (const [method, path, body, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey(method, path, tenant.apiKey, body)), 400, field)
        }
      }))
  })
})
