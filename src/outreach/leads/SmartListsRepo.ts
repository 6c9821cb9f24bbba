import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, JsonObject, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam, toNumber } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"
import { compileFilter, type LeadFilter } from "./Filter.ts"
import { LeadRecord } from "./LeadsRepo.ts"

export const SmartListRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  /** As the client gave it (it decoded then); decoded again to evaluate it. */
  filter: JsonObject,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type SmartListRecord = typeof SmartListRecord.Type

const SmartListRow = fromColumns(SmartListRecord)
const LeadRow = fromColumns(LeadRecord)

/**
 * The rows of `leads` of `companyId` that match `filter` at `now`, as a
 * subquery (`FROM (…) AS leads`): what a smart list is, wherever a statement
 * needs its people (the list's page, a campaign's recipients, an enrolment).
 */
export const matchingLeads = (sql: SqlClient.SqlClient, companyId: string, filter: LeadFilter, now: Date) =>
  sql`(SELECT * FROM leads WHERE company_id = ${companyId} AND ${compileFilter(sql, companyId, filter, now)})`

/** Smart lists of a company: saved filters over its leads, evaluated when read. */
export class SmartListsRepo extends Context.Service<SmartListsRepo, {
  readonly create: (list: SmartListRecord) => Effect.Effect<SmartListRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<SmartListRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<SmartListRecord>; readonly total: number }>
  readonly update: (
    companyId: string,
    id: string,
    change: { readonly name?: string | undefined; readonly filter?: Readonly<Record<string, unknown>> | undefined },
    now: Date
  ) => Effect.Effect<Option.Option<SmartListRecord>>
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<SmartListRecord>>
  /**
   * The company's leads matching `filter` at `now`, newest first, and how many match (counted only when the
   * page is not the last one: on the last, the walk saw them all).
   */
  readonly leads: (
    companyId: string,
    filter: LeadFilter,
    now: Date,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<LeadRecord>; readonly total: number }>
  /** Up to `limit` matching leads with ids after `afterId` (null: from the start), in id order: a walk without offsets. */
  readonly leadsAfter: (
    companyId: string,
    filter: LeadFilter,
    now: Date,
    afterId: string | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<LeadRecord>>
}>()("leads/SmartListsRepo") {
  static readonly layer = Layer.effect(SmartListsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lists = readerOf(SmartListRow)
    const leads = readerOf(LeadRow)
    return {
      create: Effect.fn("SmartListsRepo.create")(function*(list) {
        return yield* lists.one(sql`
          INSERT INTO smart_lists (id, company_id, name, filter, created_at, updated_at)
          VALUES (${list.id}, ${list.companyId}, ${list.name}, ${jsonParam(list.filter)}::jsonb, ${list.createdAt},
            ${list.updatedAt})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("SmartListsRepo.get")(function*(companyId, id) {
        return yield* lists.first(sql`SELECT * FROM smart_lists WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("SmartListsRepo.list")(function*(companyId, window) {
        return yield* selectRecords(SmartListRow, sql, "smart_lists", sql`company_id = ${companyId}`, window)
      }, Effect.orDie),
      update: Effect.fn("SmartListsRepo.update")(function*(companyId, id, change, now) {
        return yield* lists.first(sql`
          UPDATE smart_lists SET
            name = coalesce(${change.name ?? null}, name),
            filter = coalesce(${change.filter === undefined ? null : jsonParam(change.filter)}::jsonb, filter),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      remove: Effect.fn("SmartListsRepo.remove")(function*(companyId, id) {
        return yield* lists.first(sql`DELETE FROM smart_lists WHERE company_id = ${companyId} AND id = ${id} RETURNING *`)
      }, Effect.orDie),
      leads: Effect.fn("SmartListsRepo.leads")(function*(companyId, filter, now, window) {
        const matching = matchingLeads(sql, companyId, filter, now)
        // One lead more than the page tells whether another page follows; the walk in id order stops there.
        const found = yield* leads.all(sql`SELECT * FROM ${matching} AS leads
          ORDER BY id DESC LIMIT ${window.limit + 1} OFFSET ${window.offset}`)
        const rows = found.slice(0, window.limit)
        const seen = window.offset + rows.length
        if (found.length <= window.limit && rows.length > 0) return { rows, total: seen }
        // Not the last page: the matches counted, as the envelope's `total` promises (the walk above stopped early).
        const [counted] = yield* sql<{ readonly total: unknown }>`SELECT count(*) AS total FROM ${matching} AS leads`
        return { rows, total: toNumber(counted!.total) }
      }, Effect.orDie),
      leadsAfter: Effect.fn("SmartListsRepo.leadsAfter")(function*(companyId, filter, now, afterId, limit) {
        return yield* leads.all(sql`SELECT * FROM ${matchingLeads(sql, companyId, filter, now)} AS leads
          WHERE id > ${afterId ?? ""} ORDER BY id LIMIT ${limit}`)
      }, Effect.orDie)
    }
  }))
}
