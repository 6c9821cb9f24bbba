import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"

it.layer(testServer(pgliteStorage))("projects API", (it) => {
  it.effect("a company key's project carries the key's creator as uid and starts shared", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const project = yield* api.projects.create({ payload: { name: "Launch", settings: { tone: "calm" } } })
      expect(project).toMatchObject({
        name: "Launch",
        description: "",
        instructions: "",
        sharing: "Shared",
        settings: { tone: "calm" },
        uid: tenant.userId,
        companyId: tenant.companyId
      })
      expect(project.created).toBeTypeOf("number")
      expect(project.updated).toBe(project.created)
      expect(yield* api.projects.get({ params: { project_id: project.id } })).toEqual(project)
    }))

  it.effect("a person's project starts private: invisible to colleagues until shared", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const colleague = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      // A company key sees what its creator sees: one made by the colleague does not see the owner's private project.
      const company = yield* client({ apiKey: yield* companyKeyBy(tenant, member.userId) })
      const project = yield* owner.projects.create({ payload: { name: "Diary" } })
      expect(project).toMatchObject({ sharing: "Private", uid: tenant.userId })

      for (const other of [colleague, company]) {
        const hidden = yield* Effect.flip(other.projects.get({ params: { project_id: project.id } }))
        expect(hidden._tag).toBe("NotFound")
        expect((yield* other.projects.list({ query: {} })).items.map((p) => p.id)).not.toContain(project.id)
      }

      yield* owner.projects.update({ params: { project_id: project.id }, payload: { sharing: "Shared" } })
      expect((yield* colleague.projects.get({ params: { project_id: project.id } })).name).toBe("Diary")
      expect((yield* colleague.projects.list({ query: {} })).items.map((p) => p.id)).toContain(project.id)
    }))

  it.effect("PATCH changes only the supplied fields; updated moves, created does not", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const project = yield* api.projects.create({
        payload: { name: "Research", description: "Q3", instructions: "Be brief", settings: { a: 1, b: 2 } }
      })
      const patched = yield* api.projects.update({
        params: { project_id: project.id },
        payload: { instructions: "Be thorough", settings: { c: 3 }, companyId: tenant.companyId }
      })
      expect(patched).toEqual({
        ...project,
        instructions: "Be thorough",
        settings: { c: 3 },
        updated: patched.updated
      })
      expect(patched.updated).toBeGreaterThan(project.updated)
      expect(patched.created).toBe(project.created)
      const again = yield* api.projects.update({ params: { project_id: project.id }, payload: { name: "Research 2" } })
      expect(again).toMatchObject({ name: "Research 2", description: "Q3", instructions: "Be thorough" })
      expect(again.updated).toBeGreaterThan(patched.updated)
    }))

  it.effect("PATCH answers 400 for a bad body, naming the field", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const project = yield* api.projects.create({ payload: { name: "Ops" } })
      const path = `/api/v0/projects/${project.id}`
      const cases = [
        [{ sharing: "Public" }, "sharing"],
        [{ name: "  " }, "name"],
        [{ settings: [1, 2] }, "settings"],
        [{ description: 42 }, "description"]
      ] as const
      for (const [body, field] of cases) {
        const response = yield* send(requestWithKey("PATCH", path, tenant.apiKey, body))
        expectErrorResponse(response, 400, field)
      }
      expect((yield* api.projects.get({ params: { project_id: project.id } })).name).toBe("Ops")
    }))

  it.effect("PATCH answers 401 without valid credentials", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const project = yield* (yield* client({ apiKey: tenant.apiKey })).projects.create({ payload: { name: "Ops" } })
      for (const apiKey of [undefined, "sk_not-a-key"]) {
        const api = yield* client({ apiKey })
        const error = yield* Effect.flip(api.projects.update({ params: { project_id: project.id }, payload: { name: "x" } }))
        expect(error._tag).toBe("Unauthorized")
      }
    }))

  it.effect("PATCH answers 403 on a visible project the caller neither owns nor manages", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const admin = yield* addPerson(tenant, { companyRole: "admin" })
      const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const project = yield* owner.projects.create({ payload: { name: "Shared plan", sharing: "Shared" } })
      const colleague = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      const denied = yield* Effect.flip(
        colleague.projects.update({ params: { project_id: project.id }, payload: { name: "Mine now" } })
      )
      expect(denied._tag).toBe("Forbidden")
      expect(denied).toMatchObject({ error: expect.stringContaining(project.id) })
      const deleteDenied = yield* Effect.flip(colleague.projects.delete({ params: { project_id: project.id } }))
      expect(deleteDenied._tag).toBe("Forbidden")

      const manager = yield* client({ apiKey: admin.personalAccessKey, companyId: tenant.companyId })
      const renamed = yield* manager.projects.update({ params: { project_id: project.id }, payload: { name: "Plan" } })
      expect(renamed).toMatchObject({ name: "Plan", uid: tenant.userId })
    }))

  it.effect("a viewer reads projects but cannot create them", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
      const api = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
      const error = yield* Effect.flip(api.projects.create({ payload: { name: "Nope" } }))
      expect(error._tag).toBe("Forbidden")
      expect((yield* api.projects.list({ query: {} })).total).toBe(0)
    }))

  it.effect("PATCH, GET and DELETE answer 404 for unknown ids and other companies' projects", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const api = yield* client({ apiKey: tenant.apiKey })
      const theirs = yield* (yield* client({ apiKey: other.apiKey })).projects.create({ payload: { name: "Theirs" } })
      for (const id of [theirs.id, "prj_unknown"]) {
        const params = { project_id: id }
        expect((yield* Effect.flip(api.projects.update({ params, payload: { name: "x" } })))._tag).toBe("NotFound")
        expect((yield* Effect.flip(api.projects.get({ params })))._tag).toBe("NotFound")
        expect((yield* Effect.flip(api.projects.delete({ params })))._tag).toBe("NotFound")
      }
      const mine = yield* api.projects.create({ payload: { name: "Mine" } })
      const foreignCompany = yield* Effect.flip(
        api.projects.update({ params: { project_id: mine.id }, payload: { companyId: other.companyId } })
      )
      expect(foreignCompany._tag).toBe("NotFound")
      const createElsewhere = yield* Effect.flip(
        api.projects.create({ payload: { name: "x", companyId: other.companyId } })
      )
      expect(createElsewhere._tag).toBe("NotFound")
      expect((yield* (yield* client({ apiKey: other.apiKey })).projects.get({ params: { project_id: theirs.id } })).name)
        .toBe("Theirs")
    }))

  it.effect("create answers 400 naming the field", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      for (const [body, field] of [[{}, "name"], [{ name: "x", sharing: "Everyone" }, "sharing"]] as const) {
        const response = yield* send(requestWithKey("POST", "/api/v0/projects", tenant.apiKey, body))
        expectErrorResponse(response, 400, field)
      }
    }))

  it.effect("lists page through the generic envelope, newest first", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      for (const name of ["one", "two", "three"]) yield* api.projects.create({ payload: { name } })
      const first = yield* api.projects.list({ query: { page: 1, pageSize: 2 } })
      expect(first).toMatchObject({ total: 3, pages: 2, hasNext: true })
      expect(first.items.map((p) => p.name)).toEqual(["three", "two"])
      const second = yield* api.projects.list({ query: { page: 2, pageSize: 2 } })
      expect(second).toMatchObject({ total: 3, pages: 2, hasNext: false })
      expect(second.items.map((p) => p.name)).toEqual(["one"])
      const tooBig = yield* send(requestWithKey("GET", "/api/v0/projects?pageSize=101", tenant.apiKey))
      expectErrorResponse(tooBig, 400, "pageSize")
    }))

  it.effect("DELETE removes the project", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const project = yield* api.projects.create({ payload: { name: "Old" } })
      expect((yield* api.projects.delete({ params: { project_id: project.id } })).id).toBe(project.id)
      expect((yield* Effect.flip(api.projects.get({ params: { project_id: project.id } })))._tag).toBe("NotFound")
    }))
})
