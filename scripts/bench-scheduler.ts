// `npm run bench:scheduler` (under scripts/with-postgres.sh, or with
// BENCH_DATABASE_URL set): how many scheduled-task runs per second one server
// process completes on PostgreSQL with the offline `local` model provider,
// and how many two processes complete together on the same database, with
// the executions counted afterwards to prove no occurrence ran twice.
// Settings: BENCH_TASKS (default 10000), and the scheduler's own SCHEDULER_*
// variables (docs/tasks.md), which the worker processes read.
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createInterface } from "node:readline"
import { LlmLive } from "../src/models/llm/LlmLive.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { PrincipalLookupLive } from "../src/accounts/keys/Principals.ts"
import { Scheduler } from "../src/work/tasks/Scheduler.ts"
import { SchedulerConfig } from "../src/work/tasks/SchedulerConfig.ts"
import { Credits } from "../src/accounts/usage/Credits.ts"
import { runScript } from "./bench/children.ts"
import { postgresFromEnv, postgresNotSet, postgresStorage, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"

const taskCount = numberFromEnv("BENCH_TASKS", 10_000)
/** Tasks spread over this many organizations (each with one company and one employee), as real load would be. */
const organizations = 100


/** The scheduler of a server process over the database at `url`, with the configured `Llm` (offline: `local`). */
const schedulerAt = (url: string) =>
  Scheduler.layer.pipe(
    Layer.provide([Credits.layer, LlmLive, SchedulerConfig.layer, PrincipalLookupLive]),
    Layer.provide(postgresStorage(url)),
    Layer.provide(settingsWith({ logLevel: "Error" }))
  )

/** A worker process: builds its scheduler, says `ready`, waits for `go`, polls until nothing is due, reports. */
const worker = (url: string) =>
  Effect.gen(function*() {
    const scheduler = yield* Scheduler
    yield* Console.log("ready")
    yield* Effect.promise(() => once(process.stdin, "data"))
    process.stdin.destroy()
    const started = Date.now()
    let claimed = 0
    while (true) {
      const count = yield* scheduler.runDue
      if (count === 0) break
      claimed += count
    }
    yield* Console.log(JSON.stringify({ claimed, started, ended: Date.now() }))
  }).pipe(Effect.provide(schedulerAt(url)))

interface WorkerReport {
  readonly claimed: number
  readonly started: number
  readonly ended: number
}

/** Starts `count` worker processes, lets them go at once, and collects their reports. */
const runWorkers = (url: string, count: number) =>
  Effect.promise(async () => {
    const children = Array.from({ length: count }, () => {
      const child = spawn(process.execPath, [import.meta.filename, "worker", url], {
        stdio: ["pipe", "pipe", "inherit"],
        env: process.env
      })
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
      const next = async () => {
        const line = await lines.next()
        if (line.done === true) throw new Error("a worker process ended without reporting")
        return line.value
      }
      return { child, next }
    })
    for (const { next } of children) {
      if ((await next()) !== "ready") throw new Error("a worker process did not start")
    }
    for (const { child } of children) child.stdin.end("go\n")
    const reports: Array<WorkerReport> = []
    for (const { child, next } of children) {
      reports.push(JSON.parse(await next()))
      await once(child, "exit")
    }
    return reports
  })

/** A throwaway database on the server, migrated and seeded with `taskCount` one-time tasks due now. */
const seededDatabase = (serverUrl: string) =>
  Effect.gen(function*() {
    const { url } = yield* Effect.promise(() => throwawayDatabase(serverUrl))
    yield* Effect.scoped(Effect.provide(
      SqlClient.SqlClient.use((sql) =>
        Effect.gen(function*() {
          const orgs = sql`generate_series(1, ${organizations}) AS g`
          yield* sql`INSERT INTO organizations (id, name, subscription_type, credit_limit)
            SELECT 'org_bench_' || g, 'Bench ' || g, 'pro', 1000000000 FROM ${orgs}`
          yield* sql`INSERT INTO companies (id, organization_id, name)
            SELECT 'cmp_bench_' || g, 'org_bench_' || g, 'Bench ' || g FROM ${orgs}`
          yield* sql`INSERT INTO employees (id, company_id, name, role, created_at, updated_at)
            SELECT 'emp_bench_' || g, 'cmp_bench_' || g, 'Ada', 'a research analyst', now(), now() FROM ${orgs}`
          yield* sql`INSERT INTO scheduled_tasks (id, company_id, organization_id, employee_id, name, prompt,
              schedule_type, scheduled_at, timezone, next_run_at, status, created_at, updated_at)
            SELECT 'tsk_bench_' || g, 'cmp_bench_' || o, 'org_bench_' || o, 'emp_bench_' || o, 'Task ' || g,
              'Summarise the news for customer ' || g, 'one_time', now(), 'UTC', now(), 'active', now(), now()
            FROM (SELECT g, g % ${organizations} + 1 AS o FROM generate_series(1, ${taskCount}) AS g) AS t`
        })
      ),
      postgresStorage(url)
    ))
    return url
  })

interface Check {
  readonly executions: number
  readonly tasksRun: number
  readonly failed: number
  readonly notCompleted: number
  readonly usageEvents: number
}

/** What the database holds after a round: one succeeded execution and one usage event per task, or not. */
const verify = (url: string) =>
  Effect.scoped(Effect.provide(
    SqlClient.SqlClient.use((sql) =>
      Effect.gen(function*() {
        const [row] = yield* sql<Record<keyof Check, unknown>>`SELECT
          (SELECT count(*) FROM task_executions) AS executions,
          (SELECT count(DISTINCT task_id) FROM task_executions) AS "tasksRun",
          (SELECT count(*) FROM task_executions WHERE status <> 'succeeded') AS failed,
          (SELECT count(*) FROM scheduled_tasks WHERE status <> 'completed' OR run_count <> 1) AS "notCompleted",
          (SELECT count(*) FROM usage_events WHERE feature = 'tasks') AS "usageEvents"`
        return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)])) as unknown as Check
      })
    ),
    postgresStorage(url)
  ))

const coordinator = Effect.gen(function*() {
  const serverUrl = postgresFromEnv()?.url
  if (serverUrl === undefined) return yield* Effect.die(new Error(postgresNotSet))
  const concurrency = process.env.SCHEDULER_CONCURRENCY ?? "16 (default)"
  yield* Console.log(
    `${taskCount} one-time tasks due now over ${organizations} organizations; SCHEDULER_CONCURRENCY ${concurrency}`
  )
  const rows: Array<string> = []
  let single = 0
  for (const processes of [1, 2]) {
    const url = yield* seededDatabase(serverUrl)
    const reports = yield* runWorkers(url, processes)
    const check = yield* verify(url)
    const seconds = (Math.max(...reports.map((r) => r.ended)) - Math.min(...reports.map((r) => r.started))) / 1000
    const perSecond = check.tasksRun / seconds
    if (processes === 1) single = perSecond
    const duplicates = check.executions - check.tasksRun
    const ok = check.tasksRun === taskCount && duplicates === 0 && check.failed === 0 && check.notCompleted === 0 &&
      check.usageEvents === taskCount
    rows.push([
      `${processes} process${processes === 1 ? "" : "es"}`.padEnd(12),
      `${Math.round(perSecond)} runs/s`.padStart(12),
      `${seconds.toFixed(2)} s`.padStart(9),
      processes === 1 ? "".padStart(7) : `${(perSecond / single).toFixed(2)}×`.padStart(7),
      `claimed ${reports.map((r) => r.claimed).join(" + ")}`.padEnd(22),
      `executions ${check.executions}, duplicates ${duplicates}, usage events ${check.usageEvents}`,
      ok ? "ok" : `FAILED (failed runs ${check.failed}, tasks not completed ${check.notCompleted})`
    ].join("  "))
  }
  yield* Console.log(rows.join("\n"))
})

if (process.argv[2] === "worker") {
  NodeRuntime.runMain(worker(process.argv[3]!))
} else {
  runScript(() => Effect.runPromise(Effect.scoped(coordinator)))
}
