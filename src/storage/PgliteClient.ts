import { PGlite } from "@electric-sql/pglite"
import { Context, Effect, Layer, Scope, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlConnection, SqlError } from "effect/sql"
import { makeCompiler } from "@effect/sql-pg/PgClient"

/**
 * An `effect/sql` client over PGlite, the embedded PostgreSQL. PGlite is one
 * database session, so a one-permit semaphore is held for each statement, and
 * for the whole of a transaction (else another fiber's statements would run
 * inside somebody's `BEGIN`).
 */
export class Pglite extends Context.Service<Pglite, PGlite>()("storage/Pglite") {}

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

const makeConnection = (db: PGlite): SqlConnection.Connection => {
  const query = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.query<Record<string, unknown>>(sql, params as Array<unknown>),
      catch: (cause) => toSqlError(cause, "query")
    })
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query(sql, params), (result) => result.rows)
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      Effect.tryPromise({
        try: () => db.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" }),
        catch: (cause) => toSqlError(cause, "query")
      }),
      (result) => result.rows
    )
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
    executeValuesUnprepared: values,
    // Unprepared statements without parameters may hold several commands (migrations, scripts).
    executeUnprepared: (sql, params, transformRows) =>
      params.length > 0
        ? transformed(sql, params, transformRows)
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

export const makeClient = Effect.fnUntraced(function*(db: PGlite) {
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

/** Opens PGlite (in memory when `dataDir` is undefined) and closes it with the scope. */
export const open = (dataDir: string | undefined): Effect.Effect<PGlite, SqlError.SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => PGlite.create(dataDir === undefined ? undefined : dataDir),
      catch: (cause) => toSqlError(cause, "open")
    }),
    (db) => Effect.promise(() => db.close())
  )

/** A client over an already open PGlite, e.g. a migrated template's clone in tests. */
export const layerFrom = <E>(db: Effect.Effect<PGlite, E, Scope.Scope>) =>
  Layer.effectContext(Effect.gen(function*() {
    const instance = yield* db
    const client = yield* makeClient(instance)
    return Context.make(Pglite, instance).pipe(Context.add(SqlClient.SqlClient, client))
  })).pipe(Layer.provide(Reactivity.layer))
