import { Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { offsetOf, type PageRequest } from "../platform/Pagination.ts"
import { toNumber } from "./Rows.ts"

/** A slice of a result set: what the repositories page with. */
export interface Window {
  readonly offset: number
  readonly limit: number
}

export const windowOf = (request: PageRequest): Window => ({ offset: offsetOf(request), limit: request.pageSize })

/** One window of a table's matching rows, newest (highest id) first, and the count of all matching rows. */
export const selectPage = <Row extends object>(
  sql: SqlClient.SqlClient,
  table: string,
  where: Statement.Fragment,
  window: Window
) =>
  Effect.map(
    Effect.all([
      sql<Row>`SELECT * FROM ${sql(table)} WHERE ${where} ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
      sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM ${sql(table)} WHERE ${where}`
    ]),
    ([rows, count]) => ({ rows, total: toNumber(count[0].count) })
  )

/** `selectPage` with the rows decoded by the table's row schema. */
export const selectRecords = <S extends Schema.Decoder<unknown>>(
  Row: S,
  sql: SqlClient.SqlClient,
  table: string,
  where: Statement.Fragment,
  window: Window
) =>
  Effect.flatMap(selectPage<object>(sql, table, where, window), ({ rows, total }) =>
    Effect.map(Schema.decodeUnknownEffect(Schema.Array(Row))(rows), (records) => ({ rows: records, total })))
