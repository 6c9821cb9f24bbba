// `npm run bench:leads` (under scripts/with-postgres.sh, or with BENCH_DATABASE_URL set, for PostgreSQL as well as
// PGlite): the two numbers of leads. (1) Import: a CSV of BENCH_LEAD_ROWS rows (default 100,000) posted to
// POST /api/v0/leads/import of a server in its own process (on PGlite in a temporary folder, as the service keeps
// its DATA_DIR, or a throwaway PostgreSQL database), timed, with the server's RSS (VmRSS of /proc) sampled every
// 50 ms (before, at its peak, the growth) and the CPU time the server process spent (less blurred by a loaded machine).
// (2) Smart lists: as many leads with tags, statuses and timelines, and a 3-condition filter (a status, a tag,
// an activity within 30 days); p50/p99 of its first page of 25, with the matches counted, over BENCH_QUERIES
// (default 100) reads.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { openAsBlob, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { makeServer } from "../src/app/Server.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { decodeFilter } from "../src/outreach/leads/Filter.ts"
import { Leads, toUpsert } from "../src/outreach/leads/Leads.ts"
import { LeadsRepo } from "../src/outreach/leads/LeadsRepo.ts"
import { SmartListsRepo } from "../src/outreach/leads/SmartListsRepo.ts"
import { runScript, freePort, makeTempDir, spawnChild, waitUntilReady } from "./bench/children.ts"
import { pgliteStorageIn, postgresFromEnv, postgresNotSet, postgresStorage, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { latencySummary } from "./bench/stats.ts"

const rows = numberFromEnv("BENCH_LEAD_ROWS", 100_000)
const queries = numberFromEnv("BENCH_QUERIES", 100)
const adminKey = "bench-leads-admin-key"

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)

const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The server alone, in this process: `node scripts/bench-leads.ts serve <port> <PGlite folder | PostgreSQL URL>`. */
const serve = (port: number, database: string) =>
  Layer.launch(makeServer(
    NodeHttpServer.layer(createServer, { host: "127.0.0.1", port }),
    database.startsWith("postgres") ? postgresStorage(database) : pgliteStorageIn(database),
    { logAddress: false }
  ).pipe(Layer.provide(settingsWith({
    adminApiKey: Option.some(Redacted.make(adminKey)),
    rateLimitPerMinute: 1_000_000_000,
    logLevel: "Error",
    bootstrap: false,
    leads: { importMaxBytes: 100 * 1024 * 1024 }
  })))).pipe(NodeRuntime.runMain)

const csvOf = (count: number) => {
  const lines = ["Email,First Name,Last Name,Company,Job Title,Tags,Plan,City"]
  for (let i = 0; i < count; i++) {
    lines.push(`Person${i}@Example.com,First${i},Last${i},Company ${i % 500},Engineer,${i % 3 === 0 ? "vip;beta" : "cold"},${i % 2 === 0 ? "pro" : "free"},Lyon`)
  }
  const path = join(makeTempDir("bench-leads-"), "leads.csv")
  writeFileSync(path, lines.join("\n"))
  return path
}

const importRun = async (backend: string, databaseUrl: string | undefined) => {
  const port = await freePort()
  const database = databaseUrl ?? makeTempDir("bench-leads-pglite-")
  const child = spawnChild(process.execPath, [import.meta.filename, "serve", String(port), database], {
    server: `the server on ${backend}`
  })
  const baseUrl = `http://127.0.0.1:${port}`
  // A PGlite made from empty (initdb and every migration) takes a while on a loaded machine.
  await waitUntilReady(child, `${baseUrl}/health`, 300_000)
  const bootstrap = await fetch(`${baseUrl}/api/v0/admin/bootstrap`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ organization: "Bench", company: "Bench", email: `bench-${Date.now()}@example.com` })
  })
  const { apiKey } = await bootstrap.json() as { readonly apiKey: string }
  const path = csvOf(rows)
  const form = new FormData()
  form.append("file", await openAsBlob(path, { type: "text/csv" }), "leads.csv")
  const before = rssKb(child.pid)
  const cpuBefore = cpuSeconds(child.pid)
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(child.pid))), 50)
  const started = performance.now()
  const response = await fetch(`${baseUrl}/api/v0/leads/import`, { method: "POST", headers: { "x-api-key": apiKey }, body: form })
  const answer = await response.json() as Record<string, unknown>
  const ms = performance.now() - started
  clearInterval(sampler)
  peak = Math.max(peak, rssKb(child.pid))
  const cpu = cpuSeconds(child.pid) - cpuBefore
  console.log(`${backend}: import of ${rows} CSV rows: ${response.status} ${JSON.stringify({ ...answer, errors: undefined })} in ` +
    `${(ms / 1000).toFixed(1)} s (${Math.round(rows / (ms / 1000))} rows/s), server CPU ${cpu.toFixed(1)} s; server RSS ${Math.round(before / 1024)} MB before, ` +
    `${Math.round(peak / 1024)} MB at peak: +${Math.round((peak - before) / 1024)} MB`)
  await child.stop()
}

const filter = Effect.runSync(Effect.fromResult(decodeFilter({
  all: [
    { field: "status", op: "eq", value: "contacted" },
    { field: "tags", op: "eq", value: "vip" },
    { activity: "opened", op: "within", days: 30 }
  ]
})))

const smartListRun = (backend: string) =>
  Effect.gen(function*() {
    const { companyId } = yield* Admin.bootstrap({ organization: "Bench", company: "Bench", email: `bench-${Date.now()}@example.com` })
    const repo = yield* LeadsRepo
    const leads = yield* Leads
    const now = new Date()
    for (let start = 0; start < rows; start += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, rows - start) }, (_, j) => {
        const i = start + j
        return toUpsert(companyId, { email: `lead${i}@example.com`, firstName: `First${i}`, tags: i % 3 === 0 ? ["vip"] : ["cold"], fields: { plan: i % 2 === 0 ? "pro" : "free" } })
      })
      yield* repo.upsert(batch, "fill", now)
      // Every other lead was mailed (status contacted); a fifth of those opened, some recently, some long ago.
      const events = batch.filter((_, j) => (start + j) % 2 === 0).flatMap((lead, j) => [
        { companyId, type: "sent" as const, at: new Date(now.getTime() - 40 * 86_400_000), contact: { email: lead.email }, campaignId: "cmp_bench" },
        ...(j % 5 === 0
          ? [{ companyId, type: "opened" as const, at: new Date(now.getTime() - (j % 10 === 0 ? 2 : 60) * 86_400_000), contact: { email: lead.email } }]
          : [])
      ])
      yield* leads.record(events)
    }
    const smartLists = yield* SmartListsRepo
    const timed = <A>(read: Effect.Effect<A>) =>
      Effect.gen(function*() {
        const times: Array<number> = []
        let answer: A | undefined
        for (let i = 0; i < queries; i++) {
          const started = performance.now()
          answer = yield* read
          times.push(performance.now() - started)
        }
        return { answer: answer!, ...latencySummary(times) }
      })
    const page = yield* timed(smartLists.leads(companyId, filter, now, { offset: 0, limit: 25 }))
    yield* Console.log(`${backend}: smart list of 3 conditions over ${rows} leads (${page.answer.total} match): first page of 25, ` +
      `counted: p50 ${page.p50Ms.toFixed(1)} ms, p99 ${page.p99Ms.toFixed(1)} ms over ${queries} reads`)
  })

if (process.argv[2] === "serve") {
  serve(Number(process.argv[3]), process.argv[4]!)
} else {
  runScript(async () => {
    const postgres = postgresFromEnv()
    const database = postgres === undefined ? undefined : await throwawayDatabase(postgres.url)
    if (process.env.BENCH_LEADS_PART !== "smart-lists") {
      await importRun("PGlite", undefined)
      if (database !== undefined) await importRun("PostgreSQL", (await throwawayDatabase(postgres!.url)).url)
    }
    if (process.env.BENCH_LEADS_PART !== "import") {
      await Effect.runPromise(Effect.provide(smartListRun("PGlite"), inMemoryStorage))
      if (database !== undefined) await Effect.runPromise(Effect.provide(smartListRun("PostgreSQL"), postgresStorage(database.url)))
    }
    if (database === undefined) console.log(postgresNotSet)
  })
}
