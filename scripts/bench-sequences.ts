// `npm run bench:sequences`: how many sequence executions per second the
// drafting worker of one process drafts — each a billed model call (hold,
// call, settle) and a leased write — against an OpenAI-compatible stub model
// on loopback (test/support/StubUpstream.ts), on a throwaway in-memory PGlite.
// Baseline in the same run: the offline `local` model, which makes
// no HTTP call, so the difference is the cost of the model round trip.
// Then what a kill -9 does to sending: a worker process sends a sequence's
// BENCH_SEQUENCE_CRASH_ROWS approved e-mails (default 2,000; 0 skips it) to a
// local SMTP sink, is killed a third of the way, and a fresh one finishes, on
// PGlite in a data folder (its lock included) and, under
// scripts/with-postgres.sh, on PostgreSQL: duplicates, losses, `uncertain`.
// Settings: BENCH_EXECUTIONS (default 2000), BENCH_DRAFT_CONCURRENCY (8),
// BENCH_MODEL_DELAY_MS (0: the stub answers at once), MAIL_CONCURRENCY (16).
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { Delivery } from "../src/outreach/messages/Delivery.ts"
import { OutreachConfig } from "../src/outreach/messages/OutreachConfig.ts"
import { LlmLive } from "../src/models/llm/LlmLive.ts"
import { Mailer } from "../src/outreach/mail/Mailer.ts"
import { TrackingSecret } from "../src/outreach/messages/TrackingSecret.ts"
import { type SettingOverrides, settingsWith } from "../src/app/Settings.ts"
import { newId } from "../src/platform/Ids.ts"
import { executionFor } from "../src/outreach/sequences/Sequences.ts"
import { SequencesConfig } from "../src/outreach/sequences/SequencesConfig.ts"
import { SequencesRepo } from "../src/outreach/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../src/outreach/sequences/SequenceWorker.ts"
import { Credits } from "../src/accounts/usage/Credits.ts"
import { startStubUpstream } from "../test/support/StubUpstream.ts"
import { crashStorage, type CrashOutcome, describeCrash, killAndRestart } from "./bench/crash.ts"
import { postgresFromEnv, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { type Sink, startSink } from "./bench/smtp-sink.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"

const executionCount = numberFromEnv("BENCH_EXECUTIONS", 2_000)
const draftConcurrency = numberFromEnv("BENCH_DRAFT_CONCURRENCY", 8)
const modelDelayMs = numberFromEnv("BENCH_MODEL_DELAY_MS", 0)
const crashRows = numberFromEnv("BENCH_SEQUENCE_CRASH_ROWS", 2_000)
const mailConcurrency = numberFromEnv("MAIL_CONCURRENCY", 16)
const from = "Bench <bench@bench.example>"

const steps = [{
  type: "email" as const,
  subject: "Hello {{firstName}}",
  body: "<p>Introduce our product to {{firstName}} at {{company}} in three friendly sentences.</p>",
  delayDays: 0
}]

/** A tenant with one sequence and `count` enrolled contacts, their first step not drafted yet, or drafted and approved. */
const seed = (count: number, approved: boolean) => Effect.gen(function*() {
  const tenant = yield* Effect.orDie(Admin.bootstrap({ organization: "Bench", company: "Bench", email: `b${Date.now()}@bench.example` }))
  const repo = yield* SequencesRepo
  const now = new Date()
  const sequence = yield* repo.create({
    id: newId("seq"),
    companyId: tenant.companyId,
    organizationId: tenant.organizationId,
    userId: null,
    name: "Bench",
    steps,
    listId: null,
    stopOnReply: true,
    fromName: null,
    fromEmail: null,
    mailboxIds: [],
    createdAt: now,
    updatedAt: now
  })
  yield* repo.enroll(Array.from({ length: count }, (_, index) =>
    executionFor(sequence, 0, {
      listRowId: `row_${index}`,
      email: `user${index}@example.com`,
      fields: { email: `user${index}@example.com`, firstName: `Name${index}`, company: `Company ${index % 100}` }
    }, now, now)))
  if (approved) {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.orDie(sql`UPDATE sequence_executions SET status = 'approved', subject = 'Hello ' || (fields->>'firstName'),
      body = '<p>A short, friendly introduction.</p>', drafted_at = ${now}, approved_at = ${now}
      WHERE sequence_id = ${sequence.id}`)
  }
  return sequence
})

/** Drafts until nothing is left; answers executions per second and how many ended `draft` (written). */
const measure = Effect.gen(function*() {
  const sequence = yield* seed(executionCount, false)
  const worker = yield* SequenceWorker
  const started = performance.now()
  while ((yield* worker.draftBatch) > 0) {
    // Each poll drafts one leased batch.
  }
  const seconds = (performance.now() - started) / 1000
  const repo = yield* SequencesRepo
  const written = (yield* repo.executions(sequence.id, "draft", { offset: 0, limit: 1 })).total
  return { perSecond: executionCount / seconds, written, seconds }
})

const run = (name: string, storage: Layer.Layer<any, unknown>, settings: SettingOverrides) =>
  measure.pipe(
    Effect.provide(SequenceWorker.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Delivery.live, Credits.layer, LlmLive)),
      Layer.provideMerge(Mailer.layer),
      Layer.provideMerge(SequencesConfig.layerWith({ enabled: false, draftConcurrency, batchSize: 100 })),
      Layer.provideMerge(storage),
      Layer.provideMerge(settingsWith({ logLevel: "Error", ...settings }))
    )),
    Effect.map((result) => ({ name, ...result }))
  )

// --- kill -9 mid-send and restart -------------------------------------------------------------------------------

const crashSettings: SettingOverrides = { logLevel: "Error", publicBaseUrl: "https://mail.bench.example", mail: { from } }

/** A worker process: takes over what a dead process left, sends until nothing approved is left, exits. */
const runSender = (target: string, smtpUrl: string) =>
  Effect.gen(function*() {
    const worker = yield* SequenceWorker
    yield* worker.takeOver
    yield* Console.log("ready")
    while (true) {
      if ((yield* worker.sendBatch) > 0) continue
      const approved = yield* Effect.orDie(SqlClient.SqlClient.use((sql) =>
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM sequence_executions WHERE status = 'approved'`
      ))
      if (approved[0].n === 0) return
      yield* Effect.sleep("500 millis")
    }
  }).pipe(Effect.provide(SequenceWorker.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Delivery.layer.pipe(Layer.provideMerge(TrackingSecret.layer)), Credits.layer, LlmLive)),
    Layer.provideMerge(Mailer.smtp({ url: Redacted.make(smtpUrl), from, ratePerSecond: 0, dkim: Option.none(), poolSize: 8 })),
    Layer.provideMerge(OutreachConfig.layerWith({ concurrency: mailConcurrency })),
    Layer.provideMerge(SequencesConfig.layerWith({ enabled: false, batchSize: 100, leaseMs: 3_000 })),
    Layer.provideMerge(crashStorage(target, crashSettings)),
    Layer.provideMerge(settingsWith(crashSettings))
  )))

/** `crashRows` approved executions, a sending process killed a third of the way, another one finishing. */
const crashTest = (target: string, sink: Sink) =>
  killAndRestart({
    target,
    settings: crashSettings,
    total: crashRows,
    sink,
    script: import.meta.filename,
    role: "sender",
    seed: seed(crashRows, true),
    statuses: (sequence, sql) =>
      sql<{ readonly email: string; readonly status: string }>`SELECT email, status FROM sequence_executions
        WHERE sequence_id = ${sequence.id}`
  })

const crashRuns = Effect.gen(function*() {
  const sink = yield* startSink
  const runs: Array<{ readonly name: string } & CrashOutcome> = []
  const postgres = postgresFromEnv()
  if (postgres !== undefined) {
    const database = yield* Effect.promise(() => throwawayDatabase(postgres.url))
    runs.push({ name: "PostgreSQL", ...(yield* crashTest(database.url, sink)) })
  } else {
    yield* Console.log("PostgreSQL kill -9 run skipped: run under scripts/with-postgres.sh")
  }
  const dataDir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "bench-sequences-crash-")))
  runs.push({ name: "PGlite", ...(yield* crashTest(`pglite:${dataDir}`, sink)) })
  yield* Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
  for (const run of runs) yield* Console.log(describeCrash(run.name, crashRows, run))
  return runs
})

const main = Effect.gen(function*() {
  const stub = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startStubUpstream({
        record: false,
        delayMs: modelDelayMs,
        answer: () => JSON.stringify({ subject: "Hello there", body: "<p>A short, friendly introduction.</p>" })
      })
    ),
    (server) => Effect.promise(() => server.close())
  )
  const viaStub: SettingOverrides = {
    llmModels: Option.some([{ id: "bench", provider: "openai", upstream: "stub", tier: "balanced" }]),
    openaiBaseUrl: Option.some(stub.url)
  }
  const results = [
    yield* run("PGlite, local model (baseline)", inMemoryStorage, {}),
    yield* run("PGlite, stub model over HTTP", inMemoryStorage, viaStub)
  ]
  yield* Console.log(`${integer(executionCount)} executions per run, drafting concurrency ${draftConcurrency}, stub delay ${modelDelayMs} ms`)
  yield* Console.log(formatTable(
    ["run", "drafted/s", "written drafts", "seconds"],
    results.map((r) => [r.name, fixed(r.perSecond), integer(r.written), fixed(r.seconds, 2)])
  ))
  const crashes = crashRows > 0 ? yield* crashRuns : []
  writeResults("sequences", new Date(), { executionCount, draftConcurrency, modelDelayMs, results, crashRows, crashes })
})

if (process.argv[2] === "sender") NodeRuntime.runMain(runSender(process.argv[3]!, process.argv[4]!))
else NodeRuntime.runMain(Effect.scoped(main))
