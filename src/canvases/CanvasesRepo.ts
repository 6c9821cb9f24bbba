import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { selectPage, type Window } from "../storage/Windows.ts"

export interface CanvasRecord {
  readonly id: string
  readonly companyId: string
  /** Null when made with a company API key. */
  readonly ownerUserId: string | null
  readonly title: string
  readonly html: string
  /** The newest thread made for the canvas; null before its first. */
  readonly activeThreadId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface ThreadRecord {
  readonly id: string
  readonly canvasId: string
  readonly companyId: string
  readonly ownerUserId: string | null
  readonly title: string
  readonly createdAt: Date
}

export interface CanvasChange {
  readonly title?: string | undefined
  readonly html?: string | undefined
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
  /** Applies the supplied fields; `updatedAt` becomes `now`, and always moves forward. */
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
}

export class CanvasesRepo extends Context.Service<CanvasesRepo, CanvasesRepository>()("canvases/CanvasesRepo") {
  static readonly layer = Layer.effect(CanvasesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: Effect.fn("CanvasesRepo.create")(function*(canvas) {
        const rows = yield* sql<CanvasRow>`
          INSERT INTO canvases (id, company_id, owner_user_id, title, html, active_thread_id, created_at, updated_at)
          VALUES (${canvas.id}, ${canvas.companyId}, ${canvas.ownerUserId}, ${canvas.title}, ${canvas.html},
            ${canvas.activeThreadId}, ${canvas.createdAt}, ${canvas.updatedAt})
          RETURNING *`
        return canvasFromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("CanvasesRepo.get")(function*(companyId, id) {
        const rows = yield* sql<CanvasRow>`SELECT * FROM canvases WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), canvasFromRow)
      }, Effect.orDie),
      list: Effect.fn("CanvasesRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<CanvasRow>(sql, "canvases", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(canvasFromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("CanvasesRepo.update")(function*(companyId, id, change, now) {
        const rows = yield* sql<CanvasRow>`
          UPDATE canvases SET
            title = coalesce(${change.title ?? null}, title),
            html = coalesce(${change.html ?? null}, html),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), canvasFromRow)
      }, Effect.orDie),
      addThread: Effect.fn("CanvasesRepo.addThread")(function*(thread) {
        // One statement: the thread exists exactly when its canvas points at it.
        const rows = yield* sql<ThreadRow>`
          WITH canvas AS (
            UPDATE canvases SET active_thread_id = ${thread.id},
              updated_at = greatest(${thread.createdAt}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${thread.companyId} AND id = ${thread.canvasId}
            RETURNING id
          )
          INSERT INTO canvas_threads (id, canvas_id, company_id, owner_user_id, title, created_at)
          SELECT ${thread.id}, canvas.id, ${thread.companyId}, ${thread.ownerUserId}, ${thread.title}, ${thread.createdAt}
          FROM canvas
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), threadFromRow)
      }, Effect.orDie),
      listThreads: Effect.fn("CanvasesRepo.listThreads")(function*(companyId, canvasId, window) {
        const where = sql`company_id = ${companyId} AND canvas_id = ${canvasId}`
        const page = yield* selectPage<ThreadRow>(sql, "canvas_threads", where, window)
        return { rows: page.rows.map(threadFromRow), total: page.total }
      }, Effect.orDie)
    }
  }))
}

interface CanvasRow {
  readonly id: string
  readonly company_id: string
  readonly owner_user_id: string | null
  readonly title: string
  readonly html: string
  readonly active_thread_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

interface ThreadRow {
  readonly id: string
  readonly canvas_id: string
  readonly company_id: string
  readonly owner_user_id: string | null
  readonly title: string
  readonly created_at: Date
}

const canvasFromRow = (row: CanvasRow): CanvasRecord => ({
  id: row.id,
  companyId: row.company_id,
  ownerUserId: row.owner_user_id,
  title: row.title,
  html: row.html,
  activeThreadId: row.active_thread_id,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

const threadFromRow = (row: ThreadRow): ThreadRecord => ({
  id: row.id,
  canvasId: row.canvas_id,
  companyId: row.company_id,
  ownerUserId: row.owner_user_id,
  title: row.title,
  createdAt: new Date(row.created_at)
})
