import type { Results } from "@electric-sql/pglite"
import { Worker } from "node:worker_threads"
import { Context, Effect, Layer, Scope, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlConnection, SqlError } from "effect/sql"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import type { NumberedRequest, PgliteFailure, PgliteMessage, PgliteOpening, PgliteRequest, RowMode } from "./PgliteProtocol.ts"

/**
 * An `effect/sql` client over PGlite, the embedded PostgreSQL, which runs on
 * a thread of its own (`PgliteWorker.ts`): statements and their results
 * cross by message, and the thread serving requests goes on with other work
 * while a statement executes. PGlite is one database session, so a
 * one-permit semaphore is held for each statement, and for the whole of a
 * transaction (else another fiber's statements would run inside somebody's
 * `BEGIN`).
 */

/** The embedded database as this thread sees it: calls answered by its thread. */
export interface PgliteSession {
  /** A statement, prepared once per SQL text and then bound and executed in one call. */
  readonly run: <Row>(sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) => Promise<Results<Row>>
  /** A statement that is not kept prepared. */
  readonly query: <Row>(sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) => Promise<Results<Row>>
  /** Commands without parameters, several at once (migrations, scripts). */
  readonly exec: (sql: string) => Promise<Array<Results>>
  /** Calls `onNotify` on each `NOTIFY` on `channel`; answers the function that stops it. */
  readonly listen: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>
  /** The database's folder as a gzipped tarball (PGlite's `dumpDataDir`). */
  readonly dumpDataDir: () => Promise<ArrayBuffer>
}

export class Pglite extends Context.Service<Pglite, PgliteSession>()("storage/Pglite") {}

const toSqlError = (cause: unknown, operation: string): SqlError.SqlError => {
  const code = (cause as { code?: unknown }).code
  const message = cause instanceof Error ? cause.message : String(cause)
  const props = { cause, message, operation }
  return new SqlError.SqlError({
    reason: code === "23505"
      ? new SqlError.UniqueViolation({ ...props, constraint: String((cause as { constraint?: unknown }).constraint ?? "unknown") })
      : typeof code === "string" && code.startsWith("23")
      ? new SqlError.ConstraintError(props)
      : new SqlError.UnknownError(props)
  })
}

const makeConnection = (db: PgliteSession): SqlConnection.Connection => {
  const query = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.run<Record<string, unknown>>(sql, params, "object"),
      catch: (cause) => toSqlError(cause, "query")
    })
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query(sql, params), (result) => result.rows)
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      Effect.tryPromise({
        try: () => db.run<Array<unknown>>(sql, params, "array"),
        catch: (cause) => toSqlError(cause, "query")
      }),
      (result) => result.rows
    )
  const unprepared = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.query<Record<string, unknown>>(sql, params, "object"),
      catch: (cause) => toSqlError(cause, "query")
    })
  const transformed = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => (transformRows ? Effect.map(rows(sql, params), transformRows) : rows(sql, params))
  return {
    execute: transformed,
    executeRaw: query,
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(transformed(sql, params, transformRows)),
    executeValues: values,
    executeValuesUnprepared: (sql, params) =>
      Effect.tryPromise({
        try: () => db.query<Array<unknown>>(sql, params, "array"),
        catch: (cause) => toSqlError(cause, "query")
      }).pipe(Effect.map((result) => result.rows)),
    // Unprepared statements without parameters may hold several commands (migrations, scripts).
    executeUnprepared: (sql, params, transformRows) =>
      params.length > 0
        ? Effect.map(unprepared(sql, params), (result) => transformRows ? transformRows(result.rows) : result.rows)
        : Effect.tryPromise({
          try: () => db.exec(sql),
          catch: (cause) => toSqlError(cause, "exec")
        }).pipe(Effect.map((results) => results.at(-1)?.rows ?? []))
  }
}

/** Serializes every statement not already inside a transaction that holds the session. */
const locked = (connection: SqlConnection.Connection, lock: Semaphore.Semaphore): SqlConnection.Connection => ({
  execute: (sql, params, transformRows) => lock.withPermits(1)(connection.execute(sql, params, transformRows)),
  executeRaw: (sql, params) => lock.withPermits(1)(connection.executeRaw(sql, params)),
  executeStream: (sql, params, transformRows) =>
    Stream.unwrap(lock.withPermits(1)(Effect.map(
      Stream.runCollect(connection.executeStream(sql, params, transformRows)),
      Stream.fromIterable
    ))),
  executeValues: (sql, params) => lock.withPermits(1)(connection.executeValues(sql, params)),
  executeValuesUnprepared: (sql, params) => lock.withPermits(1)(connection.executeValuesUnprepared(sql, params)),
  executeUnprepared: (sql, params, transformRows) =>
    lock.withPermits(1)(connection.executeUnprepared(sql, params, transformRows))
})

export const makeClient = Effect.fnUntraced(function*(db: PgliteSession) {
  const lock = yield* Semaphore.make(1)
  const session = makeConnection(db)
  const shared = locked(session, lock)
  return yield* SqlClient.make({
    driver: "pg",
    acquirer: Effect.succeed(shared),
    transactionAcquirer: Effect.as(
      Effect.acquireRelease(lock.take(1), () => lock.release(1)),
      session
    ),
    compiler: makeCompiler(),
    spanAttributes: [["db.system.name", "pglite"]]
  })
})

export interface OpenOptions {
  /**
   * Lets V8 recompile PGlite's hot WebAssembly functions with its optimizing
   * compiler (TurboFan) instead of keeping the baseline compiler's (Liftoff)
   * code. Off by default: one of PostgreSQL's functions takes ~600 MB to
   * optimize, a peak reached seconds after every start, and the process
   * keeps ~40 MB more afterwards; statements cost more CPU without it
   * (docs/benchmarks.md).
   */
  readonly wasmTierUp?: boolean
}

/** The database thread's module beside this one: `.ts` when run from source, `.js` when built. */
const workerFile = new URL(import.meta.url.endsWith(".ts") ? "./PgliteWorker.ts" : "./PgliteWorker.js", import.meta.url)

const failed = (failure: PgliteFailure) => Object.assign(new Error(failure.message), failure)

/** Starts the database's thread; the session answers once PGlite is open there. */
const startThread = (opening: PgliteOpening) =>
  new Promise<{ readonly session: PgliteSession; readonly close: () => Promise<void> }>((ready, refused) => {
    const worker = new Worker(workerFile, {
      workerData: opening,
      // The thread's own allocations are small (messages, rows); PGlite's memory is WebAssembly's, outside the heap.
      resourceLimits: { maxYoungGenerationSizeMb: 8 }
    })
    const pending = new Map<number, { readonly resolve: (value: unknown) => void; readonly reject: (error: Error) => void }>()
    const listeners = new Map<string, () => void>()
    let next = 0
    let stopped: Error | undefined
    const call = <A>(request: PgliteRequest) =>
      new Promise<A>((resolve, reject) => {
        if (stopped !== undefined) return reject(stopped)
        const id = next++
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
        worker.postMessage({ ...request, id } satisfies NumberedRequest)
      })
    const session: PgliteSession = {
      run: (sql, params, rowMode) => call({ kind: "run", sql, params, rowMode }),
      query: (sql, params, rowMode) => call({ kind: "query", sql, params, rowMode }),
      exec: (sql) => call({ kind: "exec", sql }),
      listen: async (channel, onNotify) => {
        listeners.set(channel, onNotify)
        await call({ kind: "listen", channel })
        return async () => {
          listeners.delete(channel)
          await call({ kind: "unlisten", channel })
        }
      },
      dumpDataDir: () => call({ kind: "dump" })
    }
    /** Every call waiting, and every later one, fails: the thread is gone. */
    const stop = (error: Error) => {
      stopped ??= error
      for (const waiting of pending.values()) waiting.reject(stopped)
      pending.clear()
      refused(stopped)
    }
    worker.on("message", (message: PgliteMessage) => {
      switch (message.kind) {
        case "ready":
          return ready({ session, close: () => call<void>({ kind: "close" }).finally(() => worker.terminate()) })
        case "failed":
          return stop(failed(message.failure))
        case "answer":
        case "error": {
          const waiting = pending.get(message.id)
          pending.delete(message.id)
          return message.kind === "answer" ? waiting?.resolve(message.value) : waiting?.reject(failed(message.failure))
        }
        case "notification":
          return listeners.get(message.channel)?.()
      }
    })
    worker.on("error", stop)
    worker.on("exit", (code) => stop(new Error(`The embedded database stopped (its thread exited with ${code})`)))
  })

const opened = (opening: PgliteOpening): Effect.Effect<PgliteSession, SqlError.SqlError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({ try: () => startThread(opening), catch: (cause) => toSqlError(cause, "open") }),
      (thread) => Effect.promise(thread.close)
    ),
    (thread) => thread.session
  )

/** Opens PGlite on its thread (in memory when `dataDir` is undefined) and closes it with the scope. */
export const open = (dataDir: string | undefined, options: OpenOptions = {}) =>
  opened({ dataDir, wasmTierUp: options.wasmTierUp === true })

/** Opens PGlite in memory from a `dumpDataDir` tarball, e.g. a migrated template in tests. */
export const openDump = (dump: string) => opened({ dataDir: undefined, dump, wasmTierUp: false })

/** A client over an open PGlite, with the session itself as `Pglite`. */
export const layerFrom = <E>(db: Effect.Effect<PgliteSession, E, Scope.Scope>) =>
  Layer.effectContext(Effect.gen(function*() {
    const instance = yield* db
    const client = yield* makeClient(instance)
    return Context.make(Pglite, instance).pipe(Context.add(SqlClient.SqlClient, client))
  })).pipe(Layer.provide(Reactivity.layer))
