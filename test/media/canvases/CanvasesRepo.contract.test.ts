import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type CanvasRecord, CanvasesRepo, type MessageRecord, type RenderRecord } from "../../../src/media/canvases/CanvasesRepo.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")
const t1 = new Date("2026-06-01T09:00:00Z")

const fixture = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const repo = yield* CanvasesRepo
  const create = (overrides: Partial<CanvasRecord> = {}) =>
    repo.create({
      id: newId("cnv"),
      companyId: tenant.companyId,
      ownerUserId: tenant.userId,
      title: "Canvas",
      html: "<p>hi</p>",
      activeThreadId: null,
      htmlVersion: 1,
      createdAt: t0,
      updatedAt: t0,
      ...overrides
    })
  const thread = (canvasId: string, companyId = tenant.companyId) => ({
    id: newId("cth"),
    canvasId,
    companyId,
    ownerUserId: null,
    title: "Thread",
    createdAt: t1
  })
  return { tenant, repo, create, thread }
})

for (const backend of backends) {
  it.layer(backend.storage)(`CanvasesRepo contract on ${backend.name}`, (it) => {
    it.effect("stores every field, scoped by company", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const canvas = yield* create({ ownerUserId: null, html: "<h1>Ünïcode ✓</h1>" })
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, canvas.id))).toEqual(canvas)
        expect(Option.isNone(yield* repo.get("cmp_other", canvas.id))).toBe(true)
      }))

    it.effect("lists a company's canvases newest first, in windows", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const other = yield* seedTenant("other")
        const first = yield* create({ title: "first" })
        const second = yield* create({ title: "second" })
        yield* create({ companyId: other.companyId, ownerUserId: other.userId, title: "theirs" })
        const all = yield* repo.list(tenant.companyId, { offset: 0, limit: 10 })
        expect(all.rows.map((c) => c.id)).toEqual([second.id, first.id])
        expect(all.total).toBe(2)
        expect(yield* repo.list(tenant.companyId, { offset: 1, limit: 1 })).toMatchObject({
          total: 2,
          rows: [{ id: first.id }]
        })
      }))

    it.effect("update changes the supplied fields and always moves updatedAt forward", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const canvas = yield* create()
        const first = Option.getOrThrow(yield* repo.update(tenant.companyId, canvas.id, { title: "renamed" }, t0))
        expect(first).toMatchObject({ title: "renamed", html: canvas.html })
        expect(first.updatedAt.getTime()).toBe(t0.getTime() + 1)
        const second = Option.getOrThrow(yield* repo.update(tenant.companyId, canvas.id, { html: { html: "", source: "api" } }, t1))
        expect(second).toMatchObject({ title: "renamed", html: "", updatedAt: t1, createdAt: t0 })
        expect(Option.isNone(yield* repo.update("cmp_other", canvas.id, { title: "x" }, t1))).toBe(true)
      }))

    it.effect("a new thread becomes the canvas's active thread; threads list newest first", () =>
      Effect.gen(function*() {
        const { tenant, repo, create, thread } = yield* fixture
        const canvas = yield* create()
        const first = Option.getOrThrow(yield* repo.addThread(thread(canvas.id)))
        const second = Option.getOrThrow(yield* repo.addThread({ ...thread(canvas.id), title: "Second" }))
        expect(second).toMatchObject({ canvasId: canvas.id, title: "Second", createdAt: t1 })
        const after = Option.getOrThrow(yield* repo.get(tenant.companyId, canvas.id))
        expect(after.activeThreadId).toBe(second.id)
        expect(after.updatedAt.getTime()).toBeGreaterThan(canvas.updatedAt.getTime())
        const threads = yield* repo.listThreads(tenant.companyId, canvas.id, { offset: 0, limit: 10 })
        expect(threads).toEqual({ rows: [second, first], total: 2 })
        expect((yield* repo.listThreads("cmp_other", canvas.id, { offset: 0, limit: 10 })).total).toBe(0)
      }))

    it.effect("no thread is added to another company's or an unknown canvas", () =>
      Effect.gen(function*() {
        const { tenant, repo, create, thread } = yield* fixture
        const other = yield* seedTenant("other")
        const canvas = yield* create()
        expect(Option.isNone(yield* repo.addThread(thread(canvas.id, other.companyId)))).toBe(true)
        expect(Option.isNone(yield* repo.addThread(thread("cnv_unknown")))).toBe(true)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, canvas.id)).activeThreadId).toBeNull()
        expect((yield* repo.listThreads(other.companyId, canvas.id, { offset: 0, limit: 10 })).total).toBe(0)
      }))

    it.effect("new HTML is the next version, stored with the change; versions list newest first, scoped by company", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const other = yield* seedTenant("other")
        const canvas = yield* create({ html: "<p>one</p>" })
        const renamed = Option.getOrThrow(yield* repo.update(tenant.companyId, canvas.id, { title: "renamed" }, t1))
        expect(renamed.htmlVersion).toBe(1)
        const changed = Option.getOrThrow(yield* repo.update(tenant.companyId, canvas.id, { html: { html: "<p>two</p>", source: "chat" } }, t1))
        expect(changed).toMatchObject({ html: "<p>two</p>", htmlVersion: 2 })
        const versions = yield* repo.versions(tenant.companyId, canvas.id, { offset: 0, limit: 10 })
        expect(versions).toEqual({
          rows: [
            { canvasId: canvas.id, version: 2, source: "chat", createdAt: t1 },
            { canvasId: canvas.id, version: 1, source: "api", createdAt: t0 }
          ],
          total: 2
        })
        expect(Option.getOrThrow(yield* repo.version(tenant.companyId, canvas.id, 1)).html).toBe("<p>one</p>")
        expect(Option.isNone(yield* repo.version(other.companyId, canvas.id, 1))).toBe(true)
        expect((yield* repo.versions(other.companyId, canvas.id, { offset: 0, limit: 10 })).total).toBe(0)
        expect(Option.isNone(yield* repo.update(other.companyId, canvas.id, { html: { html: "x", source: "api" } }, t1))).toBe(true)
        expect((yield* repo.versions(tenant.companyId, canvas.id, { offset: 0, limit: 10 })).total).toBe(2)
      }))

    it.effect("a thread is found only on its own canvas and company; its messages list newest first", () =>
      Effect.gen(function*() {
        const { tenant, repo, create, thread } = yield* fixture
        const other = yield* seedTenant("other")
        const canvas = yield* create()
        const second = yield* create()
        const added = Option.getOrThrow(yield* repo.addThread(thread(canvas.id)))
        expect(Option.getOrThrow(yield* repo.getThread(tenant.companyId, canvas.id, added.id))).toEqual(added)
        expect(Option.isNone(yield* repo.getThread(tenant.companyId, second.id, added.id))).toBe(true)
        expect(Option.isNone(yield* repo.getThread(other.companyId, canvas.id, added.id))).toBe(true)
        const message = (role: MessageRecord["role"], content: string): MessageRecord => ({
          id: newId("cmsg"),
          threadId: added.id,
          companyId: tenant.companyId,
          role,
          content,
          createdAt: t1
        })
        const user = message("user", "Make it blue ✓")
        const assistant = message("assistant", "Done.")
        yield* repo.addMessages([user, assistant])
        yield* repo.addMessages([])
        expect(yield* repo.listMessages(tenant.companyId, added.id, { offset: 0, limit: 10 })).toEqual({ rows: [assistant, user], total: 2 })
        expect((yield* repo.listMessages(other.companyId, added.id, { offset: 0, limit: 10 })).total).toBe(0)
      }))

    it.effect("keeps every field of a render (a still's duration and fps null) and lists a canvas's renders newest first", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const canvas = yield* create()
        const render = (overrides: Partial<RenderRecord>): RenderRecord => ({
          id: newId("rnd"),
          canvasId: canvas.id,
          companyId: tenant.companyId,
          ownerUserId: tenant.userId,
          fileId: "fil_1",
          fileName: "Canvas.png",
          format: "png",
          width: 1200,
          height: 630,
          scale: 1.5,
          durationMs: null,
          fps: null,
          bytes: 4_321,
          createdAt: t1,
          ...overrides
        })
        const still = yield* repo.addRender(render({}))
        const loop = yield* repo.addRender(render({ format: "gif", fileName: "Canvas.gif", durationMs: 3000, fps: 30 }))
        expect(still).toEqual(render({ id: still.id }))
        expect(yield* repo.listRenders(tenant.companyId, canvas.id, { offset: 0, limit: 10 })).toEqual({ rows: [loop, still], total: 2 })
        const other = yield* seedTenant("other")
        expect((yield* repo.listRenders(other.companyId, canvas.id, { offset: 0, limit: 10 })).total).toBe(0)
      }))
  })
}
