// The databases a benchmark runs on: PGlite (in memory or in a folder) and
// PostgreSQL, on a throwaway database so that a run neither reads nor leaves
// rows in anyone's data.
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { sqlStorage } from "../../src/app/Storage.ts"
import * as Pglite from "../../src/storage/PgliteClient.ts"
import { deferCleanup } from "./children.ts"

/** Where the PostgreSQL runs point, first set wins; `scripts/with-postgres.sh` exports `TEST_DATABASE_URL`. */
export const postgresSources = ["BENCH_DATABASE_URL", "DATABASE_URL", "TEST_DATABASE_URL"] as const

/** What to say when no PostgreSQL is set. */
export const postgresNotSet = `PostgreSQL: not measured (set ${postgresSources.join(", ")}, or run under scripts/with-postgres.sh)`

export const postgresFromEnv = () => {
  for (const source of postgresSources) {
    const url = process.env[source]
    if (url !== undefined && url !== "") return { source, url }
  }
  return undefined
}

/** The service's storage over PGlite in `folder` (in memory: `inMemoryStorage` of `src/app/Storage.ts`). */
export const pgliteStorageIn = (folder: string) => sqlStorage(Pglite.layerFrom(Pglite.open(folder)), "pglite")

/** The service's storage over the PostgreSQL database at `url`. */
export const postgresStorage = (url: string) => sqlStorage(PgClient.layer({ url: Redacted.make(url) }), "postgres")

/** Runs one statement on the database at `url` (e.g. `CREATE DATABASE`, which no transaction may hold). */
export const runStatement = (url: string, statement: string) =>
  Effect.runPromise(
    SqlClient.SqlClient.use((sql) => sql.unsafe(statement)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
      Effect.asVoid
    )
  )

/** Creates `bench_…` on the server of `serverUrl`; it is dropped at clean-up, after the servers using it stopped. */
export const throwawayDatabase = async (serverUrl: string) => {
  const name = `bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
  await runStatement(serverUrl, `CREATE DATABASE ${name}`)
  deferCleanup(() => runStatement(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { name, url: url.toString() }
}
