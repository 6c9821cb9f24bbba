import { type messages, parse, PGlite, protocol, type Results } from "@electric-sql/pglite"
import { setFlagsFromString } from "node:v8"
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

/** How many statements a session keeps prepared; the least recently used beyond it is closed. */
const preparedStatementLimit = 256

/** PostgreSQL's "cached plan must not change result type". */
const isStalePlan = (error: unknown) => {
  const { code, routine } = error as { code?: unknown; routine?: unknown }
  return code === "0A000" && routine === "RevalidateCachedQuery"
}

const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    message.set(part, offset)
    offset += part.length
  }
  return message
}

/**
 * Statements run as named prepared statements: `db.query` parses, describes
 * and plans every statement anew in six calls into the database, while a
 * prepared one is bound and executed in a single call and PostgreSQL may
 * reuse its plan. Keyed by SQL text; parameter types come from the first
 * `Describe`, as `db.query` takes them.
 */
const makePreparedStatements = (db: PGlite) => {
  const statements = new Map<string, {
    readonly name: string
    readonly parameterTypes: ReadonlyArray<number>
    /** The result's columns, described once rather than on every execution. */
    readonly columns: ReadonlyArray<messages.BackendMessage>
  }>()
  // Closes ride along with the next statement rather than taking a call of their own.
  let closes: Array<Uint8Array> = []
  let counter = 0
  const prepare = async (sql: string) => {
    const found = statements.get(sql)
    if (found !== undefined) {
      statements.delete(sql)
      statements.set(sql, found)
      return found
    }
    const name = `platform_${++counter}`
    const described = await db.execProtocolStream(concat([
      protocol.serialize.parse({ name, text: sql }),
      protocol.serialize.describe({ type: "S", name }),
      protocol.serialize.sync()
    ]))
    const statement = {
      name,
      parameterTypes: parse.parseDescribeStatementResults(described),
      columns: described.filter((message) => message.name === "rowDescription")
    }
    statements.set(sql, statement)
    if (statements.size > preparedStatementLimit) {
      const [oldestSql, oldest] = statements.entries().next().value!
      statements.delete(oldestSql)
      closes.push(protocol.serialize.close({ type: "S", name: oldest.name }))
    }
    return statement
  }
  const run = async <Row>(
    sql: string,
    params: ReadonlyArray<unknown>,
    rowMode: "array" | "object"
  ): Promise<Results<Row>> => {
    const statement = await prepare(sql)
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null
      const serialize = db.serializers[statement.parameterTypes[i]!]
      return serialize ? serialize(param) : String(param)
    })
    const pending = closes
    closes = []
    try {
      const messages = await db.execProtocolStream(concat([
        ...pending,
        protocol.serialize.bind({ statement: statement.name, values }),
        protocol.serialize.execute({}),
        protocol.serialize.sync()
      ]))
      return parse.parseResults([...statement.columns, ...messages], db.parsers, { rowMode })[0] as Results<Row>
    } catch (error) {
      // A table changed since the statement was prepared and its columns with it: prepare it again, once.
      if (!isStalePlan(error) || statements.get(sql) !== statement) throw error
      statements.delete(sql)
      closes.push(protocol.serialize.close({ type: "S", name: statement.name }))
      return run(sql, params, rowMode)
    }
  }
  return { run }
}

const makeConnection = (db: PGlite): SqlConnection.Connection => {
  const prepared = makePreparedStatements(db)
  const query = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => prepared.run<Record<string, unknown>>(sql, params, "object"),
      catch: (cause) => toSqlError(cause, "query")
    })
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query(sql, params), (result) => result.rows)
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      Effect.tryPromise({
        try: () => prepared.run<Array<unknown>>(sql, params, "array"),
        catch: (cause) => toSqlError(cause, "query")
      }),
      (result) => result.rows
    )
  const unprepared = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () => db.query<Record<string, unknown>>(sql, params as Array<unknown>),
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
        try: () => db.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" }),
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

/**
 * PostgreSQL settings of the embedded database, on its command line (they win
 * over postgresql.conf, which stays as initdb wrote it). PGlite's default
 * 128 MB of shared buffers live in its WebAssembly memory, which never
 * shrinks: 32 MB cuts the idle process by ~80 MB, and the files below stay in
 * the operating system's cache. Index builds in migrations need little.
 */
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB", "-c", "maintenance_work_mem=16MB"]

export interface OpenOptions {
  /**
   * Lets V8 recompile PGlite's hot WebAssembly functions with its optimizing
   * compiler (TurboFan) instead of keeping the baseline compiler's (Liftoff)
   * code. Off by default: one of PostgreSQL's functions takes ~600 MB to
   * optimize, a peak reached seconds after every start, and the process
   * keeps ~40 MB more afterwards; statements cost more CPU without it
   * (docs/benchmarks.md). V8's flags are the process's: set before PGlite
   * compiles its module, they hold for every WebAssembly module compiled later.
   */
  readonly wasmTierUp?: boolean
}

/** Opens PGlite (in memory when `dataDir` is undefined) and closes it with the scope. */
export const open = (dataDir: string | undefined, options: OpenOptions = {}): Effect.Effect<PGlite, SqlError.SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => {
        setFlagsFromString(options.wasmTierUp === true
          ? "--wasm-tier-up --wasm-dynamic-tiering"
          : "--no-wasm-tier-up --no-wasm-dynamic-tiering")
        return PGlite.create(dataDir, { startParams })
      },
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
