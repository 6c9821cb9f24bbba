import { Effect } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import type { VersionSource } from "../../storage/BodyVersions.ts"
import { windowOf } from "../../storage/Windows.ts"
import { versionReads } from "../../http/BodyVersions.ts"
import type { Canvas, CanvasPatch, CanvasThread, CanvasVersion, CanvasVersionSummary, NewCanvas, NewThread } from "./Api.ts"
import {
  type CanvasChange,
  type CanvasRecord,
  CanvasesRepo,
  type ThreadRecord,
  type VersionRecord,
  type VersionSummaryRecord
} from "./CanvasesRepo.ts"
import { CanvasNotFound, CanvasVersionNotFound } from "./Errors.ts"

/**
 * Canvases are visible to the whole company; owners, admins and members
 * create and change them. A new chat thread becomes the canvas's active
 * thread (the spec's state change). Decisions in docs/canvases.md.
 */

export const toCanvas = (record: CanvasRecord): typeof Canvas.Type => ({
  id: record.id,
  companyId: record.companyId,
  uid: record.ownerUserId,
  title: record.title,
  html: record.html,
  activeThreadId: record.activeThreadId,
  htmlVersion: record.htmlVersion,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

export const toThread = (record: ThreadRecord): typeof CanvasThread.Type => ({
  id: record.id,
  canvasId: record.canvasId,
  title: record.title,
  uid: record.ownerUserId,
  created: record.createdAt.getTime()
})

const notFound = (id: string) => orRefuse(() => new CanvasNotFound({ id }))

export const find = (companyId: string, id: string) =>
  Effect.flatMap(CanvasesRepo.use((repo) => repo.get(companyId, id)), notFound(id))

export const create = Effect.fn("Canvases.create")(function*(input: typeof NewCanvas.Type) {
  yield* Authorized("canvases:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const created = yield* CanvasesRepo.use((repo) =>
    repo.create({
      id: newId("cnv"),
      companyId: principal.companyId,
      ownerUserId: principal.userId,
      title: input.title,
      html: input.html ?? "",
      activeThreadId: null,
      htmlVersion: 1,
      createdAt: now,
      updatedAt: now
    })
  )
  return toCanvas(created)
})

export const list = Effect.fn("Canvases.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("canvases:read")
  const { rows, total } = yield* CanvasesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toCanvas), total, request)
})

export const get = Effect.fn("Canvases.get")(function*(id: string) {
  const { principal } = yield* Authorized("canvases:read")
  return toCanvas(yield* find(principal.companyId, id))
})

export const update = Effect.fn("Canvases.update")(function*(id: string, patch: typeof CanvasPatch.Type) {
  yield* Authorized("canvases:write")
  const principal = yield* requireCompany(patch.companyId)
  const canvas = yield* find(principal.companyId, id)
  if (patch.title === undefined && patch.html === undefined) return toCanvas(canvas)
  const html = patch.html === undefined ? undefined : { html: patch.html, source: "api" as const }
  return toCanvas(yield* change(principal.companyId, id, { title: patch.title, html }))
})

/**
 * Saves `html` as the canvas's next version: the one way its HTML changes
 * (PATCH, restore and the canvas chat all come through here).
 */
export const saveHtml = (companyId: string, id: string, html: string, source: VersionSource) =>
  change(companyId, id, { html: { html, source } })

const change = (companyId: string, id: string, canvasChange: CanvasChange) =>
  Effect.gen(function*() {
    const now = yield* currentDate
    return yield* notFound(id)(yield* CanvasesRepo.use((repo) => repo.update(companyId, id, canvasChange, now)))
  })

const toVersionSummary = (record: VersionSummaryRecord): typeof CanvasVersionSummary.Type => ({
  version: record.version,
  source: record.source,
  created: record.createdAt.getTime()
})

const toVersion = (record: VersionRecord): typeof CanvasVersion.Type => ({ ...toVersionSummary(record), html: record.html })

const { page: versionPage, find: findVersion } = versionReads({
  find,
  versions: (companyId, canvasId, window) => CanvasesRepo.use((repo) => repo.versions(companyId, canvasId, window)),
  version: (companyId, canvasId, version) => CanvasesRepo.use((repo) => repo.version(companyId, canvasId, version)),
  versionNotFound: (canvasId, version) => new CanvasVersionNotFound({ canvasId, version })
})

export const listVersions = Effect.fn("Canvases.listVersions")(function*(canvasId: string, request: PageRequest) {
  const { principal } = yield* Authorized("canvases:read")
  return yield* versionPage(principal.companyId, canvasId, request, toVersionSummary)
})

export const getVersion = Effect.fn("Canvases.getVersion")(function*(canvasId: string, version: number) {
  const { principal } = yield* Authorized("canvases:read")
  return toVersion(yield* findVersion(principal.companyId, canvasId, version))
})

/** Makes an earlier version's HTML the newest version again (source `restore`). */
export const restoreVersion = Effect.fn("Canvases.restoreVersion")(function*(canvasId: string, version: number) {
  const { principal } = yield* Authorized("canvases:write")
  const found = yield* findVersion(principal.companyId, canvasId, version)
  return toCanvas(yield* saveHtml(principal.companyId, canvasId, found.html, "restore"))
})

export const createThread = Effect.fn("Canvases.createThread")(function*(canvasId: string, input: typeof NewThread.Type) {
  yield* Authorized("canvases:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const added = yield* CanvasesRepo.use((repo) =>
    repo.addThread({
      id: newId("cth"),
      canvasId,
      companyId: principal.companyId,
      ownerUserId: principal.userId,
      title: input.title,
      createdAt: now
    })
  )
  return toThread(yield* notFound(canvasId)(added))
})

export const listThreads = Effect.fn("Canvases.listThreads")(function*(canvasId: string, request: PageRequest) {
  const { principal } = yield* Authorized("canvases:read")
  yield* find(principal.companyId, canvasId)
  const { rows, total } = yield* CanvasesRepo.use((repo) =>
    repo.listThreads(principal.companyId, canvasId, windowOf(request))
  )
  return toPage(rows.map(toThread), total, request)
})
