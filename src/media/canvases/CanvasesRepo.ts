import { Array as Arr, Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { bodyVersions, versionRecords, type VersionSource } from "../../storage/BodyVersions.ts"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const CanvasRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** Null when made with a company API key. */
  ownerUserId: Schema.NullOr(Schema.String),
  title: Schema.String,
  html: Schema.String,
  /** The newest thread made for the canvas; null before its first. */
  activeThreadId: Schema.NullOr(Schema.String),
  /** The newest version of `html`: 1 when created, one more with every change of it. */
  htmlVersion: NumberColumn,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type CanvasRecord = typeof CanvasRecord.Type

export const ThreadRecord = Schema.Struct({
  id: Schema.String,
  canvasId: Schema.String,
  companyId: Schema.String,
  ownerUserId: Schema.NullOr(Schema.String),
  title: Schema.String,
  createdAt: Timestamp
})
export type ThreadRecord = typeof ThreadRecord.Type

/** A render of a canvas; its bytes are the public file `fileId`/`fileName`. */
export const RenderRecord = Schema.Struct({
  id: Schema.String,
  canvasId: Schema.String,
  companyId: Schema.String,
  ownerUserId: Schema.NullOr(Schema.String),
  fileId: Schema.String,
  fileName: Schema.String,
  format: Schema.String,
  width: NumberColumn,
  height: NumberColumn,
  scale: NumberColumn,
  /** Null for a still. */
  durationMs: Schema.NullOr(NumberColumn),
  fps: Schema.NullOr(NumberColumn),
  bytes: NumberColumn,
  createdAt: Timestamp
})
export type RenderRecord = typeof RenderRecord.Type

/** The canvas's HTML, versioned; its versions carry the company id. */
export const versionedHtml = {
  table: "canvas_versions",
  owner: "canvasId",
  body: "html",
  Body: Schema.String,
  counter: "html_version",
  inCompany: true
} as const
const { Summary: VersionSummaryRecord, Version: VersionRecord } = versionRecords(versionedHtml)
export type VersionSummaryRecord = typeof VersionSummaryRecord.Type
export type VersionRecord = typeof VersionRecord.Type

/** A turn of a canvas chat thread. */
export const MessageRecord = Schema.Struct({
  id: Schema.String,
  threadId: Schema.String,
  companyId: Schema.String,
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.String,
  createdAt: Timestamp
})
export type MessageRecord = typeof MessageRecord.Type

export interface CanvasChange {
  readonly title?: string | undefined
  /** New HTML: saved as the next version, from `source`. */
  readonly html?: { readonly html: string; readonly source: VersionSource } | undefined
}

export interface Rows<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

/** Canvases of a company and their chat threads. Every read and write is scoped by company id. */
export interface CanvasesRepository {
  readonly create: (canvas: CanvasRecord) => Effect.Effect<CanvasRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<CanvasRecord>>
  /** The company's canvases, newest first. */
  readonly list: (companyId: string, window: Window) => Effect.Effect<Rows<CanvasRecord>>
  /** Applies the supplied fields (new HTML is the next version, atomically); `updatedAt` becomes `now`, and always moves forward. */
  readonly update: (
    companyId: string,
    id: string,
    change: CanvasChange,
    now: Date
  ) => Effect.Effect<Option.Option<CanvasRecord>>
  /**
   * Adds the thread and makes it the canvas's active thread, in one step;
   * none when the canvas is not the company's.
   */
  readonly addThread: (thread: ThreadRecord) => Effect.Effect<Option.Option<ThreadRecord>>
  /** A canvas's threads, newest first. */
  readonly listThreads: (companyId: string, canvasId: string, window: Window) => Effect.Effect<Rows<ThreadRecord>>
  readonly getThread: (companyId: string, canvasId: string, id: string) => Effect.Effect<Option.Option<ThreadRecord>>
  /** A canvas's versions without their HTML, newest first. */
  readonly versions: (companyId: string, canvasId: string, window: Window) => Effect.Effect<Rows<VersionSummaryRecord>>
  readonly version: (companyId: string, canvasId: string, version: number) => Effect.Effect<Option.Option<VersionRecord>>
  readonly addMessages: (messages: ReadonlyArray<MessageRecord>) => Effect.Effect<void>
  /** A thread's messages, newest first. */
  readonly listMessages: (companyId: string, threadId: string, window: Window) => Effect.Effect<Rows<MessageRecord>>
  readonly addRender: (render: RenderRecord) => Effect.Effect<RenderRecord>
  /** A canvas's renders, newest first. */
  readonly listRenders: (companyId: string, canvasId: string, window: Window) => Effect.Effect<Rows<RenderRecord>>
}

const CanvasRow = fromColumns(CanvasRecord)
const ThreadRow = fromColumns(ThreadRecord)
const RenderRow = fromColumns(RenderRecord)
const MessageRow = fromColumns(MessageRecord)

export class CanvasesRepo extends Context.Service<CanvasesRepo, CanvasesRepository>()("canvases/CanvasesRepo") {
  static readonly layer = Layer.effect(CanvasesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const canvases = readerOf(CanvasRow)
    const threads = readerOf(ThreadRow)
    const renders = readerOf(RenderRow)
    const versions = bodyVersions(sql, versionedHtml)
    return {
      create: Effect.fn("CanvasesRepo.create")(function*(canvas) {
        return yield* canvases.one(versions.saving(
          sql`
            INSERT INTO canvases (id, company_id, owner_user_id, title, html, html_version, active_thread_id, created_at,
              updated_at)
            VALUES (${canvas.id}, ${canvas.companyId}, ${canvas.ownerUserId}, ${canvas.title}, ${canvas.html},
              ${canvas.htmlVersion}, ${canvas.activeThreadId}, ${canvas.createdAt}, ${canvas.updatedAt})
            RETURNING *`,
          "api",
          canvas.createdAt
        ))
      }, Effect.orDie),
      get: Effect.fn("CanvasesRepo.get")(function*(companyId, id) {
        return yield* canvases.first(sql`SELECT * FROM canvases WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("CanvasesRepo.list")(function*(companyId, window) {
        return yield* selectRecords(CanvasRow, sql, "canvases", sql`company_id = ${companyId}`, window)
      }, Effect.orDie),
      update: Effect.fn("CanvasesRepo.update")(function*(companyId, id, change, now) {
        const html = change.html
        return yield* canvases.first(versions.saving(
          sql`
            UPDATE canvases SET
              title = coalesce(${change.title ?? null}, title),
              html = coalesce(${html?.html ?? null}, html),
              html_version = html_version + ${html === undefined ? 0 : 1},
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${companyId} AND id = ${id}
            RETURNING *`,
          html?.source,
          now
        ))
      }, Effect.orDie),
      addThread: Effect.fn("CanvasesRepo.addThread")(function*(thread) {
        // One statement: the thread exists exactly when its canvas points at it.
        return yield* threads.first(sql`
          WITH canvas AS (
            UPDATE canvases SET active_thread_id = ${thread.id},
              updated_at = greatest(${thread.createdAt}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${thread.companyId} AND id = ${thread.canvasId}
            RETURNING id
          )
          INSERT INTO canvas_threads (id, canvas_id, company_id, owner_user_id, title, created_at)
          SELECT ${thread.id}, canvas.id, ${thread.companyId}, ${thread.ownerUserId}, ${thread.title}, ${thread.createdAt}
          FROM canvas
          RETURNING *`)
      }, Effect.orDie),
      listThreads: Effect.fn("CanvasesRepo.listThreads")(function*(companyId, canvasId, window) {
        const where = sql`company_id = ${companyId} AND canvas_id = ${canvasId}`
        return yield* selectRecords(ThreadRow, sql, "canvas_threads", where, window)
      }, Effect.orDie),
      getThread: Effect.fn("CanvasesRepo.getThread")(function*(companyId, canvasId, id) {
        return yield* threads.first(sql`
          SELECT * FROM canvas_threads WHERE company_id = ${companyId} AND canvas_id = ${canvasId} AND id = ${id}`)
      }, Effect.orDie),
      versions: Effect.fn("CanvasesRepo.versions")(function*(companyId, canvasId, window) {
        return yield* versions.list(canvasId, window, companyId)
      }, Effect.orDie),
      version: Effect.fn("CanvasesRepo.version")(function*(companyId, canvasId, version) {
        return yield* versions.get(canvasId, version, companyId)
      }, Effect.orDie),
      addMessages: Effect.fn("CanvasesRepo.addMessages")(function*(messages) {
        if (!Arr.isReadonlyArrayNonEmpty(messages)) return
        yield* sql`INSERT INTO canvas_messages ${sql.insert(Arr.map(messages, (message) => ({
          id: message.id,
          thread_id: message.threadId,
          company_id: message.companyId,
          role: message.role,
          content: message.content,
          created_at: message.createdAt
        })))}`
      }, Effect.orDie),
      listMessages: Effect.fn("CanvasesRepo.listMessages")(function*(companyId, threadId, window) {
        const where = sql`company_id = ${companyId} AND thread_id = ${threadId}`
        return yield* selectRecords(MessageRow, sql, "canvas_messages", where, window)
      }, Effect.orDie),
      addRender: Effect.fn("CanvasesRepo.addRender")(function*(render) {
        return yield* renders.one(sql`
          INSERT INTO canvas_renders (id, canvas_id, company_id, owner_user_id, file_id, file_name, format, width, height,
            scale, duration_ms, fps, bytes, created_at)
          VALUES (${render.id}, ${render.canvasId}, ${render.companyId}, ${render.ownerUserId}, ${render.fileId},
            ${render.fileName}, ${render.format}, ${render.width}, ${render.height}, ${render.scale}, ${render.durationMs},
            ${render.fps}, ${render.bytes}, ${render.createdAt})
          RETURNING *`)
      }, Effect.orDie),
      listRenders: Effect.fn("CanvasesRepo.listRenders")(function*(companyId, canvasId, window) {
        const where = sql`company_id = ${companyId} AND canvas_id = ${canvasId}`
        return yield* selectRecords(RenderRow, sql, "canvas_renders", where, window)
      }, Effect.orDie)
    }
  }))
}
