// `npm run bench:sequences`: how many sequence executions per second the
// drafting worker of one process drafts — each a billed model call (hold,
// call, settle) and a leased write — against an OpenAI-compatible stub model
// on loopback (test/support/StubUpstream.ts), on a throwaway in-memory PGlite.
// Baseline in the same run: the offline `local` model, which makes
// no HTTP call, so the difference is the cost of the model round trip.
// Settings: BENCH_EXECUTIONS (default 2000), BENCH_DRAFT_CONCURRENCY (8),
// BENCH_MODEL_DELAY_MS (0: the stub answers at once).
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import * as Admin from "../src/admin/Admin.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { Delivery } from "../src/outreach/Delivery.ts"
import { LlmLive } from "../src/llm/LlmLive.ts"
import { Mailer } from "../src/mail/Mailer.ts"
import { type SettingOverrides, settingsWith } from "../src/app/Settings.ts"
import { newId } from "../src/platform/Ids.ts"
import { executionFor } from "../src/sequences/Sequences.ts"
import { SequencesConfig } from "../src/sequences/SequencesConfig.ts"
import { SequencesRepo } from "../src/sequences/SequencesRepo.ts"
import { SequenceWorker } from "../src/sequences/SequenceWorker.ts"
import { Credits } from "../src/usage/Credits.ts"
import { startStubUpstream } from "../test/support/StubUpstream.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"

const executionCount = numberFromEnv("BENCH_EXECUTIONS", 2_000)
const draftConcurrency = numberFromEnv("BENCH_DRAFT_CONCURRENCY", 8)
const modelDelayMs = numberFromEnv("BENCH_MODEL_DELAY_MS", 0)

const steps = [{
  type: "email" as const,
  subject: "Hello {{firstName}}",
  body: "<p>Introduce our product to {{firstName}} at {{company}} in three friendly sentences.</p>",
  delayDays: 0
}]

/** A tenant with one sequence and `executionCount` enrolled contacts, their first step not drafted yet. */
const seed = Effect.gen(function*() {
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
    createdAt: now,
    updatedAt: now
  })
  yield* repo.enroll(Array.from({ length: executionCount }, (_, index) =>
    executionFor(sequence, 0, {
      listRowId: `row_${index}`,
      email: `user${index}@example.com`,
      fields: { email: `user${index}@example.com`, firstName: `Name${index}`, company: `Company ${index % 100}` }
    }, now, now)))
  return sequence
})

/** Drafts until nothing is left; answers executions per second and how many ended `draft` (written). */
const measure = Effect.gen(function*() {
  const sequence = yield* seed
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
  writeResults("sequences", new Date(), { executionCount, draftConcurrency, modelDelayMs, results })
})

NodeRuntime.runMain(Effect.scoped(main))
