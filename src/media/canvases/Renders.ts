import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { publicUrl, readPublic, safeFileName, storeFile } from "../files/Files.ts"
import { AppConfig } from "../../platform/AppConfig.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { CanvasRender, RenderInput } from "./Api.ts"
import { find } from "./Canvases.ts"
import { CanvasesRepo, type RenderRecord } from "./CanvasesRepo.ts"
import { type PublicFiles, render, stillFormats } from "./Renderer.ts"
import { emit } from "../../storage/Outbox.ts"

/**
 * Renders of a canvas (DESIGN §7.6): the canvas's HTML rendered by
 * `Renderer.ts`, the output stored as a public file owned by the canvas, and
 * a record of it listed per canvas. Renders cost no credits: no model or paid
 * provider is involved, and the browser pool and the rate limit bound what
 * one company can use (docs/canvases.md).
 */

const toRender = (record: RenderRecord, url: string): typeof CanvasRender.Type => ({
  id: record.id,
  canvasId: record.canvasId,
  format: record.format,
  width: record.width,
  height: record.height,
  scale: record.scale,
  durationMs: record.durationMs,
  fps: record.fps,
  bytes: record.bytes,
  url,
  created: record.createdAt.getTime()
})

const urlOf = (record: RenderRecord) => publicUrl({ id: record.fileId, name: record.fileName })

/** The platform's public files as the page may load them: read from the store, no network involved. */
const publicFiles = Effect.gen(function*() {
  const prefix = `${(yield* AppConfig).publicBaseUrl}/api/v0/public/files/`
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof readPublic>>>()
  const read = (url: string) => {
    const [fileId, name, ...rest] = url.slice(prefix.length).split(/[?#]/)[0]!.split("/")
    if (fileId === undefined || name === undefined || rest.length > 0) return Promise.resolve(undefined)
    return Effect.runPromiseWith(services)(readPublic(fileId, decodeURIComponent(name))).then((found) =>
      Option.match(found, {
        onNone: () => undefined,
        onSome: ({ file, bytes }) => ({ contentType: file.contentType, bytes })
      })
    )
  }
  return { prefix, read } satisfies PublicFiles
})

export const renderCanvas = Effect.fn("Canvases.render")(function*(canvasId: string, input: typeof RenderInput.Type) {
  yield* Authorized("canvases:write")
  const principal = yield* requireCompany(input.companyId)
  const canvas = yield* find(principal.companyId, canvasId)
  const still = (stillFormats as ReadonlyArray<string>).includes(input.format)
  const request = {
    html: canvas.html,
    format: input.format,
    width: input.width ?? 1200,
    height: input.height ?? 630,
    scale: input.scale ?? 1,
    durationMs: input.durationMs ?? 3000,
    fps: input.fps ?? 30
  }
  const rendered = yield* render(request, yield* publicFiles)
  const id = newId("rnd")
  const file = yield* storeFile({
    companyId: principal.companyId,
    ownerId: canvas.id,
    name: safeFileName(`${canvas.title}-${id}`, rendered.extension),
    contentType: rendered.contentType,
    bytes: rendered.bytes,
    width: Math.round(request.width * request.scale),
    height: Math.round(request.height * request.scale)
  })
  const sql = yield* SqlClient.SqlClient
  // The record and its webhook event commit together.
  const record = yield* sql.withTransaction(CanvasesRepo.use((repo) =>
    Effect.flatMap(currentDate, (now) =>
      repo.addRender({
        id,
        canvasId: canvas.id,
        companyId: principal.companyId,
        ownerUserId: principal.userId,
        fileId: file.id,
        fileName: file.name,
        format: request.format,
        width: request.width,
        height: request.height,
        scale: request.scale,
        durationMs: still ? null : request.durationMs,
        fps: still ? null : request.fps,
        bytes: rendered.bytes.length,
        createdAt: now
      }))
  ).pipe(
    Effect.tap((record) =>
      Effect.flatMap(urlOf(record), (url) => emit(record.companyId, "render.completed", { ...toRender(record, url), renderId: record.id }))
    )
  )).pipe(Effect.orDie)
  return toRender(record, yield* urlOf(record))
})

export const listRenders = Effect.fn("Canvases.listRenders")(function*(canvasId: string, request: PageRequest) {
  const { principal } = yield* Authorized("canvases:read")
  yield* find(principal.companyId, canvasId)
  const { rows, total } = yield* CanvasesRepo.use((repo) => repo.listRenders(principal.companyId, canvasId, windowOf(request)))
  const items = yield* Effect.forEach(rows, (record) => Effect.map(urlOf(record), (url) => toRender(record, url)))
  return toPage(items, total, request)
})
