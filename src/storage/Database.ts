import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../platform/AppConfig.ts"
import { lockDataDir } from "./DataDirLock.ts"
import { migrate } from "./Migrations.ts"
import * as Pglite from "./PgliteClient.ts"
import { seedFromTemplate } from "./PgliteTemplate.ts"

export type Backend = "postgres" | "pglite"

/** What storage the process runs on, for `/health` and start-up decisions. */
export class Storage extends Context.Service<Storage, {
  readonly backend: Backend
  readonly migrationVersion: number
}>()("storage/Storage") {}

const migrated = (backend: Backend) =>
  Layer.effect(
    Storage,
    Effect.map(migrate, (migrationVersion) => ({ backend, migrationVersion }))
  )

/**
 * Storage over SQL, given the repositories' `sql` layers (the composition
 * root, `src/app/Storage.ts`, names them): the repositories and `Storage` over
 * a `SqlClient` layer; migrations run before anything is served.
 */
export const sqlStorageOf = <R, RE>(repositories: Layer.Layer<R, RE, SqlClient.SqlClient>) =>
<E>(client: Layer.Layer<SqlClient.SqlClient, E>, backend: Backend) =>
  Layer.mergeAll(repositories, migrated(backend)).pipe(Layer.provideMerge(client))

/**
 * The PostgreSQL client. Multiplexed: concurrent statements are pipelined on
 * pooled connections, several in one socket write, which costs the server
 * far less CPU per statement than a write and a wait each; transactions still
 * hold a connection of their own.
 */
export const postgresClient = (url: Redacted.Redacted) => PgClient.layer({ url, multiplex: true })

/** The configured database: PostgreSQL when `DATABASE_URL` is set, else PGlite persisted in `DATA_DIR`. */
export const configuredDatabase = Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) {
    return { client: postgresClient(config.databaseUrl.value), backend: "postgres" as Backend }
  }
  const dataDir = config.dataDir
  const open = lockDataDir(dataDir).pipe(
    Effect.andThen(seedFromTemplate(dataDir)),
    Effect.tap((seeded) =>
      seeded ? Effect.logInfo(`Created the embedded database in ${dataDir} from the pre-initialised template`) : Effect.void
    ),
    Effect.andThen(Pglite.open(dataDir, { wasmTierUp: config.pgliteWasmTierUp }))
  )
  return { client: Pglite.layerFrom(open), backend: "pglite" as Backend }
})


/**
 * `shared` over the SQL client when several processes may share the database
 * (PostgreSQL), else `local`: the embedded database serves a single process.
 */
export const sharedOnPostgres = <A, E1, R1, E2, R2>(
  shared: Layer.Layer<A, E1, R1 | SqlClient.SqlClient>,
  local: Layer.Layer<A, E2, R2>
) =>
  Layer.unwrap(Effect.gen(function*() {
    const storage = yield* Storage
    const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
    const chosen: Layer.Layer<A, E1 | E2, Exclude<R1, SqlClient.SqlClient> | R2> =
      storage.backend === "postgres" && Option.isSome(sql)
        ? Layer.provide(shared, Layer.succeed(SqlClient.SqlClient, sql.value))
        : local
    return chosen
  }))
