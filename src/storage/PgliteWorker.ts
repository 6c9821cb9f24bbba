import { type messages, parse, PGlite, protocol, type Results } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { vector } from "@electric-sql/pglite-pgvector"
import { readFileSync } from "node:fs"
import { setFlagsFromString } from "node:v8"
import { parentPort, workerData } from "node:worker_threads"
import type { NumberedRequest, PgliteFailure, PgliteMessage, PgliteOpening, RowMode } from "./PgliteProtocol.ts"

/**
 * The embedded database's own thread (see `PgliteClient.ts`): PGlite runs
 * here, so the thread that serves requests never waits on a statement's
 * execution, only for its answer. Calls arrive one at a time (the client
 * holds a lock per statement and per transaction) and answer in order.
 */

/**
 * PostgreSQL settings of the embedded database, on its command line (they win
 * over postgresql.conf, which stays as initdb wrote it). PGlite's default
 * 128 MB of shared buffers live in its WebAssembly memory, which never
 * shrinks: 32 MB cuts the idle process by ~80 MB, and the files below stay in
 * the operating system's cache. Index builds in migrations need little.
 */
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=32MB", "-c", "maintenance_work_mem=16MB"]

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
    rowMode: RowMode
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

const failureOf = (cause: unknown): PgliteFailure => {
  const { code, constraint, routine } = cause as { code?: unknown; constraint?: unknown; routine?: unknown }
  return {
    message: cause instanceof Error ? cause.message : String(cause),
    code: typeof code === "string" ? code : undefined,
    constraint: typeof constraint === "string" ? constraint : undefined,
    routine: typeof routine === "string" ? routine : undefined
  }
}

const port = parentPort!
const post = (message: PgliteMessage, transfer: ReadonlyArray<ArrayBuffer> = []) => port.postMessage(message, transfer)

const opening = workerData as PgliteOpening
// V8's flags are the thread's isolate's: set before PGlite compiles its module.
setFlagsFromString(opening.wasmTierUp ? "--wasm-tier-up --wasm-dynamic-tiering" : "--no-wasm-tier-up --no-wasm-dynamic-tiering")

/** Extensions the migrations create: `pg_trgm` (the recipients search's trigram index), `vector` (the knowledge base's semantic search). */
const extensions = { pg_trgm, vector }

const open = () =>
  opening.dump === undefined
    ? PGlite.create(opening.dataDir, { startParams, extensions })
    : PGlite.create({ startParams, extensions, loadDataDir: new Blob([readFileSync(opening.dump)]) })

const answer = (db: PGlite, prepared: ReturnType<typeof makePreparedStatements>, listening: Map<string, () => Promise<void>>) =>
  async (request: NumberedRequest): Promise<unknown> => {
    switch (request.kind) {
      case "run":
        return prepared.run(request.sql, request.params, request.rowMode)
      case "query":
        return db.query(request.sql, request.params as Array<unknown>, { rowMode: request.rowMode })
      case "exec":
        return db.exec(request.sql)
      case "listen":
        if (!listening.has(request.channel)) {
          listening.set(request.channel, await db.listen(request.channel, () => post({ kind: "notification", channel: request.channel })))
        }
        return undefined
      case "unlisten":
        await listening.get(request.channel)?.()
        listening.delete(request.channel)
        return undefined
      case "dump":
        return (await db.dumpDataDir("gzip")).arrayBuffer()
      case "close":
        await db.close()
        return undefined
    }
  }

try {
  const db = await open()
  const handle = answer(db, makePreparedStatements(db), new Map())
  port.on("message", (request: NumberedRequest) => {
    handle(request).then(
      (value) => post({ kind: "answer", id: request.id, value }, value instanceof ArrayBuffer ? [value] : []),
      (cause) => post({ kind: "error", id: request.id, failure: failureOf(cause) })
    )
  })
  post({ kind: "ready" })
} catch (cause) {
  post({ kind: "failed", failure: failureOf(cause) })
}
