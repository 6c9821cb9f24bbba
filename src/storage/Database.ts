import { PgClient } from "@effect/sql-pg"
import { Context, Data, Effect, Layer, Option, type Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../platform/AppConfig.ts"
import { MemoryStore } from "./MemoryStore.ts"
import { latestMigration, migrate } from "./Migrations.ts"
import * as Pglite from "./PgliteClient.ts"

export type Backend = "postgres" | "pglite" | "memory"

/** What storage the process runs on, for `/health` and start-up decisions. */
export class Storage extends Context.Service<Storage, {
  readonly backend: Backend
  readonly migrationVersion: number
  /** True when this start created the database (an empty embedded data folder). */
  readonly fresh: boolean
}>()("storage/Storage") {}

export class StorageStartError extends Data.TaggedError("StorageStartError")<{ readonly message: string }> {}

/** One file-system step of start-up; a failure ends the start with its message. */
const fsStep = <A>(step: () => A) =>
  Effect.try({ try: step, catch: (error) => new StorageStartError({ message: String(error) }) })

/** Creates the lock file holding this process's id; false when one exists already. */
const createLock = (lockFile: string) =>
  fsStep(() => {
    try {
      const fd = openSync(lockFile, "wx")
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
      throw error
    }
  })

/**
 * Takes the data folder for this process alone: PGlite is a single-process
 * database, and two processes writing one folder would corrupt it. A lock
 * left by a process that no longer runs is taken over.
 */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lockFile = join(dataDir, "platform-api.lock")
      yield* fsStep(() => mkdirSync(dataDir, { recursive: true }))
      for (let attempt = 0; attempt < 2; attempt++) {
        if (yield* createLock(lockFile)) return lockFile
        const holder = Number(yield* fsStep(() => readFileSync(lockFile, "utf8")))
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
          return yield* new StorageStartError({
            message: `Data folder ${dataDir} is in use by process ${holder}; stop it or choose another DATA_DIR`
          })
        }
        yield* fsStep(() => rmSync(lockFile, { force: true }))
      }
      return yield* new StorageStartError({ message: `Could not lock data folder ${dataDir}` })
    }),
    (lockFile) => Effect.sync(() => rmSync(lockFile, { force: true }))
  )

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const isEmptyDataDir = (dataDir: string) => {
  try {
    return readFileSync(join(dataDir, "PG_VERSION"), "utf8").length === 0
  } catch {
    return true
  }
}

const migrated = (backend: Backend, fresh: boolean) =>
  Layer.effect(
    Storage,
    Effect.map(migrate, (migrationVersion) => ({ backend, migrationVersion, fresh }))
  )

/**
 * Storage over SQL, given the repositories' `sql` layers (the composition
 * root, `src/app/Storage.ts`, names them): the repositories and `Storage` over
 * a `SqlClient` layer; migrations run before anything is served.
 */
export const sqlStorageOf = <R, RE>(repositories: Layer.Layer<R, RE, SqlClient.SqlClient>) =>
<E>(client: Layer.Layer<SqlClient.SqlClient, E>, backend: Backend, fresh: boolean) =>
  Layer.mergeAll(repositories, migrated(backend, fresh)).pipe(Layer.provideMerge(client))

/** Memory storage, given the repositories' `memory` layers: they share one `MemoryStore`. */
export const memoryStorageOf = <R, RE>(repositories: Layer.Layer<R, RE, MemoryStore>) =>
  Layer.mergeAll(
    repositories.pipe(Layer.provideMerge(MemoryStore.layer)),
    Layer.succeed(Storage, { backend: "memory", migrationVersion: latestMigration(), fresh: true })
  )

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
    return { client: postgresClient(config.databaseUrl.value), backend: "postgres" as Backend, fresh: false }
  }
  const dataDir = config.dataDir
  const open = Effect.flatMap(lockDataDir(dataDir), () => Pglite.open(dataDir))
  return { client: Pglite.layerFrom(open), backend: "pglite" as Backend, fresh: isEmptyDataDir(dataDir) }
})


/**
 * `shared` over the SQL client when several processes may share the database
 * (PostgreSQL), else `local`: the embedded database and the memory backend
 * serve a single process.
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
