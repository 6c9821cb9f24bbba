import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

describe.each(backends)("canvases API on $name", ({ storage }) => {
  it.layer(testServer(storage))("", (it) => {
    it.effect("creates, reads, lists and changes a canvas", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Launch page" } })
        expect(canvas).toMatchObject({
          title: "Launch page",
          html: "",
          activeThreadId: null,
          htmlVersion: 1,
          companyId: tenant.companyId,
          uid: tenant.userId
        })
        expect(canvas.updated).toBe(canvas.created)
        expect(yield* api.canvases.get({ params: { canvas_id: canvas.id } })).toEqual(canvas)
        const patched = yield* api.canvases.update({
          params: { canvas_id: canvas.id },
          payload: { html: "<h1>Hello</h1>" }
        })
        expect(patched).toEqual({ ...canvas, html: "<h1>Hello</h1>", htmlVersion: 2, updated: patched.updated })
        expect(patched.updated).toBeGreaterThan(canvas.updated)
        const second = yield* api.canvases.create({ payload: { title: "Other", html: "<p>x</p>" } })
        const page = yield* api.canvases.list({ query: { pageSize: 1 } })
        expect(page).toEqual({ items: [second], total: 2, pages: 2, hasNext: true })
      }))

    it.effect("every change of the HTML is a version; a title change is not; an old version can be restored", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Card", html: "<h1>One</h1>" } })
        const params = { canvas_id: canvas.id }
        yield* api.canvases.update({ params, payload: { html: "<h1>Two</h1>" } })
        expect((yield* api.canvases.update({ params, payload: { title: "Renamed" } })).htmlVersion).toBe(2)
        const versions = yield* api.canvases.listVersions({ params, query: {} })
        expect(versions.items.map((version) => [version.version, version.source])).toEqual([[2, "api"], [1, "api"]])
        expect(versions.total).toBe(2)
        expect(yield* api.canvases.getVersion({ params: { ...params, version: 1 } })).toMatchObject({ version: 1, html: "<h1>One</h1>" })
        const restored = yield* api.canvases.restoreVersion({ params: { ...params, version: 1 } })
        expect(restored).toMatchObject({ html: "<h1>One</h1>", htmlVersion: 3, title: "Renamed" })
        expect((yield* api.canvases.listVersions({ params, query: { pageSize: 1 } })).items).toMatchObject([{ version: 3, source: "restore" }])
        expect((yield* Effect.flip(api.canvases.getVersion({ params: { ...params, version: 9 } })))._tag).toBe("NotFound")
        expectErrorResponse(yield* send(requestWithKey("GET", `/api/v0/content/canvases/${canvas.id}/versions/0`, tenant.apiKey)), 400, "version")
        expectErrorResponse(yield* send(requestWithKey("GET", `/api/v0/content/canvases/${canvas.id}/versions/x`, tenant.apiKey)), 400, "version")
      }))

    it.effect("a new thread becomes the canvas's active thread", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        const canvas = yield* api.canvases.create({ payload: { title: "Deck" } })
        const params = { canvas_id: canvas.id }
        const first = yield* api.canvases.createThread({ params, payload: { title: "Ideas", companyId: tenant.companyId } })
        expect(first).toMatchObject({ canvasId: canvas.id, title: "Ideas", uid: tenant.userId })
        expect((yield* api.canvases.get({ params })).activeThreadId).toBe(first.id)
        const second = yield* api.canvases.createThread({ params, payload: { title: "Review" } })
        expect((yield* api.canvases.get({ params })).activeThreadId).toBe(second.id)
        const threads = yield* api.canvases.listThreads({ params, query: {} })
        expect(threads).toEqual({ items: [second, first], total: 2, pages: 1, hasNext: false })
      }))

    it.effect("thread creation without a title, or with an empty one, answers 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Deck" } })
        const path = `/api/v0/content/canvases/${canvas.id}/threads`
        for (const body of [{}, { title: "" }, { title: "   " }, { title: 7 }]) {
          expectErrorResponse(yield* send(requestWithKey("POST", path, tenant.apiKey, body)), 400, "title")
        }
        expect((yield* api.canvases.get({ params: { canvas_id: canvas.id } })).activeThreadId).toBeNull()
      }))

    it.effect("bad canvas bodies answer 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Deck" } })
        const cases = [
          ["POST", "/api/v0/content/canvases", {}, "title"],
          ["POST", "/api/v0/content/canvases", { title: "x", html: 3 }, "html"],
          ["POST", "/api/v0/content/canvases", { title: "x", html: "a".repeat(500_001) }, "html"],
          ["PATCH", `/api/v0/content/canvases/${canvas.id}`, { title: "" }, "title"]
        ] as const
        for (const [method, path, body, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey(method, path, tenant.apiKey, body)), 400, field)
        }
      }))

    it.effect("another company's or an unknown canvas answers 404 everywhere", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* client({ apiKey: tenant.apiKey })
        const theirs = yield* (yield* client({ apiKey: other.apiKey })).canvases.create({ payload: { title: "Theirs" } })
        for (const id of [theirs.id, "cnv_unknown"]) {
          const params = { canvas_id: id }
          const calls: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
            api.canvases.get({ params }),
            api.canvases.update({ params, payload: { title: "Mine" } }),
            api.canvases.createThread({ params, payload: { title: "Mine" } }),
            api.canvases.listThreads({ params, query: {} }),
            api.canvases.listVersions({ params, query: {} }),
            api.canvases.getVersion({ params: { ...params, version: 1 } }),
            api.canvases.restoreVersion({ params: { ...params, version: 1 } })
          ]
          for (const call of calls) expect((yield* Effect.flip(call))._tag).toBe("NotFound")
        }
        expect((yield* api.canvases.list({ query: {} })).total).toBe(0)
        const untouched = yield* (yield* client({ apiKey: other.apiKey })).canvases.get({ params: { canvas_id: theirs.id } })
        expect(untouched).toMatchObject({ title: "Theirs", activeThreadId: null })
      }))

    it.effect("viewers read canvases and threads but cannot create or change them", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const owner = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* owner.canvases.create({ payload: { title: "Deck" } })
        const api = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        const params = { canvas_id: canvas.id }
        expect((yield* api.canvases.get({ params })).title).toBe("Deck")
        expect((yield* api.canvases.listThreads({ params, query: {} })).total).toBe(0)
        const writes: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          api.canvases.create({ payload: { title: "x" } }),
          api.canvases.update({ params, payload: { title: "x" } }),
          api.canvases.createThread({ params, payload: { title: "x" } }),
          api.canvases.restoreVersion({ params: { ...params, version: 1 } })
        ]
        for (const call of writes) {
          expect((yield* Effect.flip(call))._tag).toBe("Forbidden")
        }
      }))

    it.effect("answers 401 without credentials", () =>
      Effect.gen(function*() {
        const api = yield* client({})
        expect((yield* Effect.flip(api.canvases.list({ query: {} })))._tag).toBe("Unauthorized")
      }))
  })
})
