import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** `sql/` beside `src/` (and beside `dist/` once built). */
export const migrationsDirectory = fileURLToPath(new URL("../../sql/", import.meta.url))

/**
 * Splits a migration file into statements: each ends with `;` at the end of a
 * line. PostgreSQL's extended protocol runs one statement at a time, so the
 * same files run unchanged on PostgreSQL and PGlite.
 */
export const statementsOf = (source: string): ReadonlyArray<string> =>
  source
    .split(/;[ \t]*$/m)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.split("\n").some((line) => line.trim() !== "" && !line.trim().startsWith("--")))

const loader: Migrator.Loader = Effect.sync(() =>
  readdirSync(migrationsDirectory)
    .flatMap((file) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file)
      if (match === null) return []
      const statements = statementsOf(readFileSync(`${migrationsDirectory}${file}`, "utf8"))
      const run = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const statement of statements) yield* sql.unsafe(statement)
      })
      return [[Number(match[1]), match[2], Effect.succeed(run)] as const]
    })
    .sort(([a], [b]) => a - b)
)

const migrator = Migrator.make({})

/** Applies pending migrations and answers the version the database is at. */
export const migrate = Effect.gen(function*() {
  yield* migrator({ loader })
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ version: number | null }>`SELECT max(migration_id) AS version FROM effect_sql_migrations`
  return Number(rows[0]?.version ?? 0)
})

/** The highest migration shipped with this build (what a current template holds). */
export const latestMigration = (): number =>
  Math.max(0, ...readdirSync(migrationsDirectory).map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0)))
