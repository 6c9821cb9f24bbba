import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { currentDate } from "../../platform/Time.ts"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"
import { containing, jsonParam, toNumber } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import { emailKey } from "./ListsRepo.ts"

export const SuppressionRecord = Schema.Struct({
  companyId: Schema.String,
  /** As first seen; matched ignoring case. */
  email: Schema.String,
  reason: Schema.Literals(["unsubscribed", "hard_bounce", "manual"]),
  createdAt: Timestamp
})
export type SuppressionRecord = typeof SuppressionRecord.Type
export type SuppressionReason = SuppressionRecord["reason"]

const SuppressionRow = fromColumns(SuppressionRecord)

/**
 * The company-wide suppression list: addresses that no campaign or sequence
 * may mail. Addresses are matched ignoring case. Senders check a batch of
 * recipients at once with `suppressedAmong`.
 */
export interface SuppressionsRepository {
  /** Suppresses the address; one already suppressed keeps its entry. Answers the entry in force. */
  readonly add: (companyId: string, email: string, reason: SuppressionReason) => Effect.Effect<SuppressionRecord>
  readonly isSuppressed: (companyId: string, email: string) => Effect.Effect<boolean>
  /** The lower-cased forms of those `emails` that are suppressed. */
  readonly suppressedAmong: (companyId: string, emails: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /** Newest first; `search` is a case-insensitive substring of the address. */
  readonly list: (
    companyId: string,
    search: string | undefined,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<SuppressionRecord>; readonly total: number }>
  /** The removed entry; none when the address was not suppressed. */
  readonly remove: (companyId: string, email: string) => Effect.Effect<Option.Option<SuppressionRecord>>
}

/** Addresses per `suppressedAmong` statement. */
const lookupChunk = 10_000

export class Suppressions extends Context.Service<Suppressions, SuppressionsRepository>()("lists/Suppressions") {
  static readonly layer = Layer.effect(Suppressions, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(SuppressionRow)
    const filter = (companyId: string, search: string | undefined) =>
      search === undefined || search === ""
        ? sql`company_id = ${companyId}`
        : sql`company_id = ${companyId} AND email ILIKE ${containing(search)}`
    return {
      add: Effect.fn("Suppressions.add")(function*(companyId, email, reason) {
        const now = yield* currentDate
        const inserted = yield* records.all(sql`
          INSERT INTO suppressions (company_id, email_key, email, reason, created_at)
          VALUES (${companyId}, ${emailKey(email)}, ${email.trim()}, ${reason}, ${now})
          ON CONFLICT (company_id, email_key) DO NOTHING
          RETURNING *`)
        if (inserted.length > 0) return inserted[0]
        // Already suppressed (perhaps by a concurrent add that committed meanwhile): its entry stands.
        return yield* records.one(sql`
          SELECT * FROM suppressions WHERE company_id = ${companyId} AND email_key = ${emailKey(email)}`)
      }, Effect.orDie),
      isSuppressed: Effect.fn("Suppressions.isSuppressed")(function*(companyId, email) {
        const rows = yield* sql`
          SELECT 1 FROM suppressions WHERE company_id = ${companyId} AND email_key = ${emailKey(email)}`
        return rows.length > 0
      }, Effect.orDie),
      suppressedAmong: Effect.fn("Suppressions.suppressedAmong")(function*(companyId, emails) {
        const found = new Set<string>()
        const keys = [...new Set(emails.map(emailKey))]
        for (let start = 0; start < keys.length; start += lookupChunk) {
          const rows = yield* sql<{ readonly email_key: string }>`
            SELECT email_key FROM suppressions WHERE company_id = ${companyId}
              AND email_key IN (SELECT jsonb_array_elements_text(${jsonParam(keys.slice(start, start + lookupChunk))}::jsonb))`
          for (const row of rows) found.add(row.email_key)
        }
        return found
      }, Effect.orDie),
      list: Effect.fn("Suppressions.list")(function*(companyId, search, window) {
        const where = filter(companyId, search)
        const [rows, count] = yield* Effect.all([
          records.all(sql`SELECT * FROM suppressions WHERE ${where} ORDER BY created_at DESC, email_key COLLATE "C"
            LIMIT ${window.limit} OFFSET ${window.offset}`),
          sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM suppressions WHERE ${where}`
        ])
        return { rows, total: toNumber(count[0].count) }
      }, Effect.orDie),
      remove: Effect.fn("Suppressions.remove")(function*(companyId, email) {
        return yield* records.first(sql`
          DELETE FROM suppressions WHERE company_id = ${companyId} AND email_key = ${emailKey(email)} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
