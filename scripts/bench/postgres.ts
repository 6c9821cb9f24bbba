// The PostgreSQL server a benchmark may run on, and a throwaway database on it
// so that a run neither reads nor leaves rows in anyone's data.
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { deferCleanup } from "./children.ts"

/** Where the PostgreSQL runs point, first set wins; `scripts/with-postgres.sh` exports `TEST_DATABASE_URL`. */
export const postgresSources = ["BENCH_DATABASE_URL", "DATABASE_URL", "TEST_DATABASE_URL"] as const

export const postgresFromEnv = () => {
  for (const source of postgresSources) {
    const url = process.env[source]
    if (url !== undefined && url !== "") return { source, url }
  }
  return undefined
}

const runStatement = (url: string, statement: string) =>
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
