// `npm run bench:mail` (under scripts/with-postgres.sh for the PostgreSQL rows, or with BENCH_DATABASE_URL):
// a campaign to BENCH_MAIL_ROWS list rows (default 100,000) delivered to a local SMTP sink (smtp-server in a
// child process), on PostgreSQL and on PGlite: messages per second end to end (recipients made, rendered,
// tracked, sent over pooled SMTP, recorded) next to the raw rate of nodemailer alone against the same sink,
// measured right before each run (BENCH_MAIL_RAW messages, default 20,000), so that both see the same load;
// the CPU time per message of each side (this process and its main thread, the sink, and a local PostgreSQL's
// server processes), and two ceilings on the share of the raw rate that CPU time sets, whatever the load: the
// machine's cores all busy with the platform, its database and the sink; and each side's main thread as busy
// as the other's (each runs its SMTP client there: nodemailer alone is bound by its main thread);
// the recipients page's latency at that many recipients; and a kill -9 of a worker process mid-send and a
// restart, counting duplicates and losses at the sink. Settings: MAIL_CONCURRENCY (default 16 here),
// MAIL_POOL_SIZE (default 8 here), MAIL_BATCH_SIZE (default 500 here), BENCH_MAIL_CRASH_ROWS (default 20,000;
// 0 skips the kill -9 runs), BENCH_MAIL_BACKENDS (default `postgres,pglite`), BENCH_MAIL_SEND (`off`: make the
// recipients and measure the page only), BENCH_MAIL_DKIM (default `off,on`: each end-to-end run once from MAIL_FROM,
// unsigned, and once from a verified sending domain of the company, DKIM-signed with its key; repeat them to
// interleave, e.g. `off,on,off,on`: the cost is taken between the modes' mean rates, and between their CPU time per
// message, the process's and its main thread's), BENCH_MAIL_STATEMENTS (`1`: count the SQL statements per message and
// list the most frequent; this turns the tracer on, which the server keeps off, so the run's rate and CPU then include
// the spans' cost).
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import nodemailer from "nodemailer"
import { mkdtemp, rm } from "node:fs/promises"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { sqlStorage } from "../src/app/Storage.ts"
import { CampaignsConfig } from "../src/outreach/campaigns/CampaignsConfig.ts"
import { newDraft } from "../src/outreach/campaigns/Campaigns.ts"
import { CampaignsRepo } from "../src/outreach/campaigns/CampaignsRepo.ts"
import { CampaignWorker, senderLoops } from "../src/outreach/campaigns/CampaignWorker.ts"
import { RecipientsRepo } from "../src/outreach/campaigns/RecipientsRepo.ts"
import { startSending } from "../src/outreach/campaigns/Sending.ts"
import { newDomainRecord } from "../src/outreach/domains/Domains.ts"
import { DomainsRepo } from "../src/outreach/domains/DomainsRepo.ts"
import { Delivery } from "../src/outreach/messages/Delivery.ts"
import { OutreachConfig } from "../src/outreach/messages/OutreachConfig.ts"
import { TrackingSecret } from "../src/outreach/messages/TrackingSecret.ts"
import { Mailer } from "../src/outreach/mail/Mailer.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { JsonLogger, TracingOff } from "../src/app/Server.ts"
import { newId } from "../src/platform/Ids.ts"
import { postgresClient } from "../src/storage/Database.ts"
import * as Pglite from "../src/storage/PgliteClient.ts"
import { crashStorage, type CrashOutcome, describeCrash, killAndRestart } from "./bench/crash.ts"
import { listFromEnv, numberFromEnv } from "./bench/env.ts"
import { type Sink, startSink } from "./bench/smtp-sink.ts"
import { statementCounter } from "./bench/statements.ts"
import { cpuSecondsOfAll } from "./bench/servers.ts"
import { percentile } from "./bench/stats.ts"

const rowCount = numberFromEnv("BENCH_MAIL_ROWS", 100_000)
const crashRows = numberFromEnv("BENCH_MAIL_CRASH_ROWS", 20_000)
const rawCount = numberFromEnv("BENCH_MAIL_RAW", 20_000)
const cores = availableParallelism()
/** `off`: recipients are made and the page measured, nothing is sent (the page's latency at a size, quickly). */
const sending = process.env.BENCH_MAIL_SEND !== "off"
const countStatements = process.env.BENCH_MAIL_STATEMENTS === "1"
const signings = listFromEnv("BENCH_MAIL_DKIM", ["off", "on"]) ?? ["off", "on"]
const concurrency = numberFromEnv("MAIL_CONCURRENCY", 16)
const poolSize = numberFromEnv("MAIL_POOL_SIZE", 8)
const batchSize = numberFromEnv("MAIL_BATCH_SIZE", 500)
const from = "Bench <bench@bench.example>"
const html = `<html><body><h1>{{RANDOM | Hello | Hi}} {{firstName | friend}}</h1>
<p>Our autumn sale for {{company}} starts today: everything at half price, this week only.</p>
<p><a href="https://shop.example/sale?who={{email}}">See the sale</a> · <a href="https://shop.example/">Shop</a></p>
<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p></body></html>`

// --- the raw baseline: nodemailer alone ----------------------------------------------------------------------

/** nodemailer alone: messages per second, and this process's and the sink's CPU time per message. */
const rawRate = (sink: Sink, count: number) =>
  Effect.andThen(sink.reset, Effect.promise(async () => {
    const url = sink.url
    const transport = nodemailer.createTransport({ pool: true, url, maxConnections: poolSize, maxMessages: 1_000 })
    const started = performance.now()
    const cpuAtStart = process.cpuUsage()
    const mainCpuAtStart = process.threadCpuUsage()
    let next = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++
        await transport.sendMail({
          from,
          to: `raw${i}@example.com`,
          subject: `Hello ${i}, our sale`,
          html: html.replaceAll("{{email}}", `raw${i}@example.com`),
          text: "Our autumn sale starts today.",
          messageId: `<raw${i}@bench.example>`
        })
      }
    }))
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuAtStart)
    const mainCpu = process.threadCpuUsage(mainCpuAtStart)
    transport.close()
    return {
      rate: count / seconds,
      cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / count,
      mainCpuMsPerMessage: (mainCpu.user + mainCpu.system) / 1000 / count
    }
  })).pipe(Effect.flatMap((measured) =>
    Effect.map(sink.report, (report) => ({ ...measured, sinkCpuMsPerMessage: report.cpuMs / Math.max(1, report.unique) }))
  ))

/** `senderLoops` copies of a sender loop side by side, as the server's campaign worker runs them. */
const alongside = <E, R>(loop: Effect.Effect<void, E, R>) =>
  Effect.all(Array.from({ length: senderLoops }, () => loop), { concurrency: "unbounded", discard: true })

// --- storage, seeding, the worker ----------------------------------------------------------------------------

const statements = statementCounter({ byText: countStatements })

// Warnings (a worker's takeovers, a lost lease) are shown; the server's tracing is off, as `npm start` runs it.
const appSettings = { logLevel: "Warn" as const, publicBaseUrl: "https://mail.bench.example", mail: { from } }

/**
 * The worker as the server runs it. `leaseMs`: the crash runs' short lease (so that PostgreSQL's restarted worker
 * waits 3 s, not `MAIL_LEASE_MS`); the end-to-end runs keep the default, whose renewals are rare.
 */
const workerLayer = <E>(storage: Layer.Layer<any, E>, smtpUrl: string, leaseMs?: number) =>
  CampaignWorker.layer.pipe(
    Layer.provideMerge(Delivery.layer),
    Layer.provideMerge(TrackingSecret.layer),
    Layer.provideMerge(
      Mailer.smtp({ url: Redacted.make(smtpUrl), from, ratePerSecond: 0, dkim: Option.none(), poolSize })
    ),
    Layer.provideMerge(OutreachConfig.layerWith({ concurrency })),
    Layer.provideMerge(CampaignsConfig.layerWith({ enabled: false, batchSize, ...(leaseMs === undefined ? {} : { leaseMs }) })),
    Layer.provideMerge(storage),
    Layer.provideMerge(Layer.mergeAll(countStatements ? statements.layer : TracingOff, JsonLogger)),
    Layer.provideMerge(settingsWith(appSettings))
  )

/** A verified sending domain of the company (as if its records had been found in DNS); answers its name. */
const verifiedDomain = (companyId: string) =>
  Effect.gen(function*() {
    const record = yield* newDomainRecord(companyId, `d${Date.now().toString(36)}.bench.example`)
    const checks = Object.fromEntries(["spf", "dkim", "dmarc"].map((purpose) => [purpose, { status: "verified" as const, found: [] }]))
    yield* DomainsRepo.use((repo) =>
      Effect.andThen(repo.create(record), repo.saveCheck(companyId, record.id, { status: "verified", checks, checkedAt: new Date() }))
    )
    return record.domain
  })

/**
 * A tenant with a list of `count` rows (bulk-inserted) and a draft campaign to it; answers the campaign.
 * `signed`: the campaign sends from a verified domain of the company (DKIM-signed), else from MAIL_FROM.
 */
const seedCampaign = (count: number, signed = false) =>
  Effect.gen(function*() {
    const tenant = yield* Effect.orDie(Admin.bootstrap({ organization: "Bench", company: "Bench", email: `b${Date.now()}@bench.example` }))
    const fromEmail = signed ? `news@${yield* verifiedDomain(tenant.companyId)}` : undefined
    const sql = yield* SqlClient.SqlClient
    const listId = newId("lst")
    const now = new Date()
    yield* sql`INSERT INTO contact_lists (id, company_id, name, row_count, created_at, updated_at)
      VALUES (${listId}, ${tenant.companyId}, 'Bench', ${count}, ${now}, ${now})`
    yield* sql`INSERT INTO contact_list_rows (id, list_id, email, email_key, first_name, company, fields, created_at)
      SELECT ${listId} || '_' || lpad(g::text, 8, '0'), ${listId}, 'user' || g || '@example.com', 'user' || g || '@example.com',
        'Name' || g, 'Company ' || (g % 100), '{}'::jsonb, ${now}
      FROM generate_series(1, ${count}) AS g`
    const campaign = yield* CampaignsRepo.use((repo) =>
      repo.create(
        newDraft(tenant.companyId, tenant.userId, { name: "Bench", subject: "{{firstName}}, our autumn sale", listId, bodyDocument: { html }, fromEmail }, now),
        "api"
      )
    )
    return { campaign, listId }
  }).pipe(Effect.orDie)

/** Latency of the recipients page (a page, its total and the metrics, as the endpoint reads them) at random pages and a search. */
const pageLatency = (campaignId: string, total: number) =>
  Effect.gen(function*() {
    const repo = yield* RecipientsRepo
    const measure = (search: string | undefined) =>
      Effect.gen(function*() {
        const times: Array<number> = []
        for (let i = 0; i < 200; i++) {
          const page = Math.floor(Math.random() * Math.min(400, total / 25))
          const started = performance.now()
          yield* repo.page(campaignId, search, { offset: page * 25, limit: 25 })
          times.push(performance.now() - started)
        }
        times.sort((a, b) => a - b)
        return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
      })
    return { plain: yield* measure(undefined), search: yield* measure("user4242") }
  })

/** The end-to-end run on one backend: start the send, drain it with this process's worker, measure. */
/** `serverProcess`: the name of the database server's processes on this machine (none: the database runs in this one). */
const endToEnd = <E>(name: string, storage: Layer.Layer<any, E>, serverProcess: string | undefined, sink: Sink, signed: boolean) =>
  Effect.gen(function*() {
    const { campaign, listId } = yield* seedCampaign(rowCount, signed)
    const raw = yield* rawRate(sink, Math.min(rowCount, rawCount))
    yield* sink.reset
    const started = performance.now()
    const cpuAtStart = process.cpuUsage()
    const mainCpuAtStart = process.threadCpuUsage()
    const databaseCpu = () => serverProcess === undefined ? 0 : cpuSecondsOfAll(serverProcess)
    const databaseCpuAtStart = databaseCpu()
    statements.reset()
    yield* Effect.orDie(startSending(campaign, { source: { listId, smartListId: null }, filter: null }))
    const startMs = performance.now() - started
    const worker = yield* CampaignWorker
    // As the server's worker runs it: `senderLoops` loops side by side, each batch by batch until none is left.
    if (sending) {
      yield* alongside(Effect.gen(function*() {
        while ((yield* worker.sendBatch) > 0) {
          // drained batch by batch
        }
      }))
    }
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuAtStart)
    const mainCpu = process.threadCpuUsage(mainCpuAtStart)
    const databaseSeconds = databaseCpu() - databaseCpuAtStart
    const report = yield* sink.report
    // This process's CPU time (all its threads: the server's, PGlite's, the signing threads) per message: unlike the rate, barely moved by other load.
    const cpuMsPerMessage = (cpu.user + cpu.system) / 1000 / Math.max(1, report.unique)
    // The main thread's alone: the sender's own loop, which a CPU-bound sender's rate follows.
    const mainCpuMsPerMessage = (mainCpu.user + mainCpu.system) / 1000 / Math.max(1, report.unique)
    // A local PostgreSQL's processes (0 on PGlite, which runs on a thread of this process, and with a remote server).
    const databaseCpuMsPerMessage = (databaseSeconds * 1000) / Math.max(1, report.unique)
    const sinkCpuMsPerMessage = report.cpuMs / Math.max(1, report.unique)
    const counted = { statements: statements.counts.statements, transactions: statements.counts.transactions, texts: [...statements.texts] }
    const latency = yield* pageLatency(campaign.id, rowCount)
    return {
      name: `${name}${signed ? " DKIM-signed" : ""}`,
      startMs,
      seconds,
      raw,
      rate: report.unique / seconds,
      cpuMsPerMessage,
      mainCpuMsPerMessage,
      databaseCpuMsPerMessage,
      sinkCpuMsPerMessage,
      report,
      latency,
      counted
    }
  }).pipe(Effect.provide(workerLayer(storage, sink.url)))

// --- kill -9 mid-send and restart (PostgreSQL, and PGlite in a data folder) ----------------------------------

/**
 * A worker process: takes over what a dead process left (at once on PGlite, whose lock proves it dead),
 * then drains the sender until nothing is pending, then exits.
 */
const runWorker = (target: string, smtpUrl: string) =>
  Effect.gen(function*() {
    const worker = yield* CampaignWorker
    yield* worker.takeOver
    yield* Console.log("ready")
    yield* alongside(Effect.gen(function*() {
      while (true) {
        const claimed = yield* worker.sendBatch
        if (claimed === 0) {
          const pending = yield* Effect.orDie(SqlClient.SqlClient.use((sql) =>
            sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM campaign_recipients WHERE status = 'pending'`
          ))
          if (pending[0].n === 0) return
          yield* Effect.sleep("500 millis")
        }
      }
    }))
  }).pipe(Effect.provide(workerLayer(crashStorage(target, appSettings), smtpUrl, 3_000)))

/** A campaign of `crashRows` started, a worker process killed with SIGKILL a third of the way, another one finishing. */
const crashTest = (target: string, sink: Sink) =>
  killAndRestart({
    target,
    settings: appSettings,
    total: crashRows,
    sink,
    script: import.meta.filename,
    role: "worker",
    seed: Effect.gen(function*() {
      const { campaign, listId } = yield* seedCampaign(crashRows)
      return yield* startSending(campaign, { source: { listId, smartListId: null }, filter: null })
    }),
    statuses: (campaign, sql) =>
      sql<{ readonly email: string; readonly status: string }>`SELECT email, status FROM campaign_recipients
        WHERE campaign_id = ${campaign.id}`
  })

// --- the coordinator ---------------------------------------------------------------------------------------------

const freshPostgres = (serverUrl: string, name: string) =>
  Effect.gen(function*() {
    yield* Effect.scoped(Effect.provide(
      SqlClient.SqlClient.use((sql) => sql.unsafe(`CREATE DATABASE ${name}`)),
      postgresClient(Redacted.make(serverUrl))
    ))
    const target = new URL(serverUrl)
    target.pathname = `/${name}`
    return target.toString()
  }).pipe(Effect.orDie)

const coordinator = Effect.scoped(Effect.gen(function*() {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
  const sink = yield* startSink
  yield* Console.log(
    `${rowCount} recipients per campaign; MAIL_CONCURRENCY ${concurrency}, MAIL_POOL_SIZE ${poolSize}, MAIL_BATCH_SIZE ${batchSize}`
  )
  const report = (run: Effect.Success<ReturnType<typeof endToEnd>>) =>
    Console.log([
      `${run.name}: nodemailer alone → sink right before:`,
      `${Math.round(run.raw.rate)} messages/s, CPU per message ${run.raw.cpuMsPerMessage.toFixed(2)} ms`,
      `(main thread ${run.raw.mainCpuMsPerMessage.toFixed(2)} ms), sink ${run.raw.sinkCpuMsPerMessage.toFixed(2)} ms\n`,
      `${run.name} end to end:`.padEnd(32),
      `${Math.round(run.rate)} messages/s (${Math.round((run.rate / run.raw.rate) * 100)}% of raw),`,
      `${run.seconds.toFixed(1)} s for ${run.report.unique} messages, duplicates ${run.report.duplicates},`,
      `recipients made in ${Math.round(run.startMs)} ms, CPU per message ${run.cpuMsPerMessage.toFixed(2)} ms`,
      `(main thread ${run.mainCpuMsPerMessage.toFixed(2)} ms), database server ${run.databaseCpuMsPerMessage.toFixed(2)} ms,`,
      `sink ${run.sinkCpuMsPerMessage.toFixed(2)} ms\n`,
      `${run.name} CPU ceilings:`.padEnd(32),
      `${Math.round(100 * coresShare(run))}% of raw with every core busy (${cores} cores over the CPU per message of the platform,`,
      `its database and the sink), ${Math.round((100 * run.raw.mainCpuMsPerMessage) / run.mainCpuMsPerMessage)}%`,
      `with each side's main thread as busy as the other's (raw's main-thread CPU per message over the platform's)\n`,
      `${run.name} recipients page at ${rowCount}:`.padEnd(32),
      `p50 ${run.latency.plain.p50.toFixed(1)} ms, p99 ${run.latency.plain.p99.toFixed(1)} ms;`,
      `with search p50 ${run.latency.search.p50.toFixed(1)} ms, p99 ${run.latency.search.p99.toFixed(1)} ms`
    ].join(" ")).pipe(Effect.andThen(countStatements ? statementsReport(run) : Effect.void))
  /** The rate this machine's cores allow the platform, its database and the sink together, as a share of raw's. */
  const coresShare = (run: Effect.Success<ReturnType<typeof endToEnd>>) =>
    (cores * 1000) / (run.cpuMsPerMessage + run.databaseCpuMsPerMessage + run.sinkCpuMsPerMessage) / run.raw.rate
  const statementsReport = (run: Effect.Success<ReturnType<typeof endToEnd>>) =>
    Effect.gen(function*() {
      const per = (n: number) => (n / Math.max(1, run.report.unique)).toFixed(3)
      yield* Console.log(`${run.name} per message: ${per(run.counted.statements)} SQL statements, ${per(run.counted.transactions)} transactions`)
      for (const [text, { count }] of run.counted.texts.sort((a, b) => b[1].count - a[1].count).slice(0, 8)) {
        yield* Console.log(`  ${per(count)} × ${text.slice(0, 120)}`)
      }
    })
  /** Each signing mode in turn on one backend's fresh storage; with both, the cost of signing as a share of the rate. */
  const runs = (name: string, storage: Effect.Effect<Layer.Layer<any, unknown>>, serverProcess?: string) =>
    Effect.gen(function*() {
      const runsOf = { off: [] as Array<Effect.Success<ReturnType<typeof endToEnd>>>, on: [] as Array<Effect.Success<ReturnType<typeof endToEnd>>> }
      for (const signing of signings) {
        const run = yield* endToEnd(name, yield* storage, serverProcess, sink, signing === "on")
        runsOf[signing].push(run)
        yield* report(run)
      }
      const mean = (runs: ReadonlyArray<Effect.Success<ReturnType<typeof endToEnd>>>, of: (run: typeof runs[number]) => number) =>
        runs.reduce((sum, run) => sum + of(run), 0) / runs.length
      if (runsOf.off.length > 0 && runsOf.on.length > 0) {
        const [unsigned, signed] = [mean(runsOf.off, (run) => run.rate), mean(runsOf.on, (run) => run.rate)]
        const [cpuUnsigned, cpuSigned] = [mean(runsOf.off, (run) => run.cpuMsPerMessage), mean(runsOf.on, (run) => run.cpuMsPerMessage)]
        const [mainUnsigned, mainSigned] = [mean(runsOf.off, (run) => run.mainCpuMsPerMessage), mean(runsOf.on, (run) => run.mainCpuMsPerMessage)]
        yield* Console.log(
          `${name} DKIM signing: mean rate ${Math.round(signed)} vs ${Math.round(unsigned)} messages/s ` +
            `(${((1 - signed / unsigned) * 100).toFixed(1)}% less); CPU ${cpuSigned.toFixed(2)} vs ${cpuUnsigned.toFixed(2)} ms per message, ` +
            `main thread ${mainSigned.toFixed(2)} vs ${mainUnsigned.toFixed(2)} ms ` +
            `(the rate a sender bound by its main thread loses: ${((1 - mainUnsigned / mainSigned) * 100).toFixed(1)}%; ` +
            `by all its CPU: ${((1 - cpuUnsigned / cpuSigned) * 100).toFixed(1)}%)`
        )
      }
    })
  const backends = listFromEnv("BENCH_MAIL_BACKENDS", ["postgres", "pglite"]) ?? ["postgres", "pglite"]
  if (serverUrl !== undefined && backends.includes("postgres")) {
    // A fresh database per run: named when each run starts.
    yield* runs("PostgreSQL", Effect.map(
      Effect.suspend(() => freshPostgres(serverUrl, `bench_mail_${newId("db").toLowerCase()}`)),
      (url) => sqlStorage(postgresClient(Redacted.make(url)), "postgres")
    ), "postgres")
  }
  const crashReport = (name: string, crash: CrashOutcome) => Console.log(describeCrash(name, crashRows, crash))
  if (serverUrl === undefined) {
    yield* Console.log("PostgreSQL rows and its kill -9 test skipped: run under scripts/with-postgres.sh")
  } else if (backends.includes("postgres") && crashRows > 0) {
    const crashUrl = yield* freshPostgres(serverUrl, `bench_mail_crash_${Date.now().toString(36)}`)
    yield* crashReport("PostgreSQL", yield* crashTest(crashUrl, sink))
  }
  if (backends.includes("pglite") && crashRows > 0) {
    const dataDir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "bench-mail-crash-")))
    yield* crashReport("PGlite", yield* crashTest(`pglite:${dataDir}`, sink))
    yield* Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
  }
  if (backends.includes("pglite")) {
    yield* runs("PGlite", Effect.sync(() => sqlStorage(Pglite.layerFrom(Pglite.open(undefined)), "pglite")))
  }
}))

if (process.argv[2] === "worker") NodeRuntime.runMain(runWorker(process.argv[3]!, process.argv[4]!))
else NodeRuntime.runMain(coordinator)
