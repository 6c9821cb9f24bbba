import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { toNumber } from "./Rows.ts"

/**
 * Planner statistics kept fresh by the repository that fills a table. PGlite,
 * the embedded database, runs no autovacuum: a table filled after start-up (a
 * lead import) would be planned with default selectivities, 0.5 % for every
 * equality, so the planner takes 100,000 leads for a handful and nests loops
 * over them (seconds for a smart list). The writer notes the rows it writes;
 * once they reach the table's size at the last analysis (at least
 * `minimumRows`), it analyses the columns queries filter on, sampling 6,000
 * rows (statistics target 20) so that the analysis stays well under a second.
 * On PostgreSQL this runs sooner what autovacuum would.
 */
export interface TableStatistics {
  /** Notes `rows` written (inserted or updated); analyses the table when enough were. */
  readonly written: (rows: number) => Effect.Effect<void>
}

const minimumRows = 1_000

export const tableStatistics = (
  sql: SqlClient.SqlClient,
  table: string,
  columns: ReadonlyArray<string>
): TableStatistics => {
  let pending = 0
  let known = 0
  const analyse = sql.withTransaction(Effect.gen(function*() {
    yield* sql`SET LOCAL default_statistics_target = 20`
    yield* sql`ANALYZE ${sql(table)} (${sql.csv(columns.map((column) => sql`${sql(column)}`))})`
    const [size] = yield* sql<{ readonly reltuples: unknown }>`SELECT reltuples FROM pg_class WHERE oid = ${table}::regclass`
    known = Math.max(0, toNumber(size?.reltuples))
  }))
  return {
    written: (rows) =>
      Effect.suspend(() => {
        pending += rows
        if (pending < Math.max(minimumRows, known)) return Effect.void
        pending = 0
        // Stale statistics only cost speed: a failed analysis is logged, never the writer's failure.
        return Effect.ignore(analyse, { log: "Warn", message: `ANALYZE ${table} failed` })
      })
  }
}
