// The kill -9 runs of the mail benchmarks: a worker process sends to the SMTP
// sink, is killed with SIGKILL a third of the way, a fresh one takes over and
// finishes; then the sink's counts and the recipients' statuses tell what the
// crash cost (duplicates, messages never delivered, sends left `uncertain`).
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { configuredStorage, sqlStorage } from "../../src/app/Storage.ts"
import { type SettingOverrides, settingsWith } from "../../src/app/Settings.ts"
import { postgresClient } from "../../src/storage/Database.ts"
import { lineReader, type Sink, type SinkReport } from "./smtp-sink.ts"

/** Where a crash run keeps its data: a PostgreSQL URL, or `pglite:<data folder>` (the folder's lock included). */
export const crashStorage = (target: string, settings: SettingOverrides) =>
  target.startsWith("pglite:")
    ? configuredStorage.pipe(Layer.provide(settingsWith({ ...settings, dataDir: target.slice("pglite:".length) })))
    : sqlStorage(postgresClient(Redacted.make(target)), "postgres")

/** Runs `effect` with the storage of `target`, closed when it is done (the PGlite folder's lock released). */
const inStorage = (target: string, settings: SettingOverrides) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(effect.pipe(Effect.provide(crashStorage(target, settings)), Effect.provide(settingsWith(settings)), Effect.orDie))

/**
 * Starts `node <script> ...args` and waits until it prints `ready`. What it logs before (a restarted worker
 * logs the leases it took over) is passed on to standard error; a worker that ends without `ready` is killed,
 * so that no orphan keeps sending.
 */
const spawnWorker = (script: string, args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] })
    const next = lineReader(child)
    try {
      for (let line = await next(); line !== "ready"; line = await next()) process.stderr.write(`worker: ${line}\n`)
    } catch (error) {
      child.kill("SIGKILL")
      throw new Error("the worker did not start", { cause: error })
    }
    // Read on, so that a worker logging more never blocks on a full pipe.
    void (async () => {
      for (;;) process.stderr.write(`worker: ${await next()}\n`)
    })().catch(() => undefined)
    return child
  })

export interface CrashOutcome {
  /** Messages at the sink when the first worker was killed. */
  readonly atKill: number
  readonly report: SinkReport
  readonly restartSeconds: number
  /** Addresses the sink never received. */
  readonly losses: number
  readonly uncertain: number
  /** `uncertain` sends the sink did receive. */
  readonly uncertainDelivered: number
  readonly statuses: Readonly<Record<string, number>>
}

/**
 * Seeds `total` messages to send in `target`, starts `node <script> <role> <target> <sink url>` (a worker that
 * prints `ready`, sends until nothing is left and exits), kills it once a third of `total` reached the sink,
 * starts a second one and waits for it to finish, then compares the sink with the statuses the database
 * records (one row per address).
 */
export const killAndRestart = <A, R>(options: {
  readonly target: string
  readonly settings: SettingOverrides
  readonly total: number
  readonly sink: Sink
  readonly script: string
  readonly role: string
  readonly seed: Effect.Effect<A, unknown, R>
  readonly statuses: (
    seeded: A,
    sql: SqlClient.SqlClient
  ) => Effect.Effect<ReadonlyArray<{ readonly email: string; readonly status: string }>, unknown>
}) =>
  Effect.gen(function*() {
    const { total, sink } = options
    const storage = inStorage(options.target, options.settings)
    const seeded = yield* storage(options.seed)
    const worker = spawnWorker(options.script, [options.role, options.target, sink.url])
    yield* sink.reset
    const first = yield* worker
    let atKill = 0
    while (true) {
      atKill = (yield* sink.report).messages
      if (atKill >= total / 3) break
      yield* Effect.sleep("20 millis")
    }
    first.kill("SIGKILL")
    yield* Effect.promise(() => once(first, "exit"))
    const restarted = performance.now()
    const second = yield* worker
    yield* Effect.promise(() => once(second, "exit"))
    const report = yield* sink.addresses
    const delivered = new Set(report.delivered)
    const rows = yield* storage(SqlClient.SqlClient.use((sql) => options.statuses(seeded, sql)))
    const statuses: Record<string, number> = {}
    for (const row of rows) statuses[row.status] = (statuses[row.status] ?? 0) + 1
    const uncertain = rows.filter((row) => row.status === "uncertain")
    return {
      atKill,
      report,
      restartSeconds: (performance.now() - restarted) / 1000,
      losses: total - report.unique,
      uncertain: uncertain.length,
      uncertainDelivered: uncertain.filter((row) => delivered.has(row.email)).length,
      statuses
    } satisfies CrashOutcome
  })

/** One line saying what the crash cost. */
export const describeCrash = (name: string, total: number, crash: CrashOutcome) =>
  `${name} kill -9 after ${crash.atKill} of ${total} delivered, then a restart (done in ${crash.restartSeconds.toFixed(1)} s): ` +
  `${crash.report.messages} messages, duplicates ${crash.report.duplicates}, never delivered ${crash.losses}, ` +
  `uncertain ${crash.uncertain} (of which delivered ${crash.uncertainDelivered}); statuses ${JSON.stringify(crash.statuses)}`
