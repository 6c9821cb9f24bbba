import { Effect, Layer } from "effect"
import type { SettingOverrides } from "../../src/app/Settings.ts"
import { SequencesConfig, type SequenceSettings } from "../../src/outreach/sequences/SequencesConfig.ts"
import { SequenceWorker } from "../../src/outreach/sequences/SequenceWorker.ts"
import { testDelivery, testMailFrom } from "./CampaignWorkerTest.ts"
import { onLiveClock } from "./SchedulerTest.ts"
import { type Script, scriptedLlm } from "./ScriptedLlm.ts"
import { testServer } from "./TestServer.ts"

export const testSequenceLeaseMs = 120_000

/**
 * The test server plus a `SequenceWorker` over the same storage that mails
 * through the SMTP server at `smtpUrl`, with the offline `local` model or,
 * given a script, the scripted `Llm`. No background loop runs: tests call
 * the worker and move time with `TestClock`.
 */
export const sequenceTestServer = <A, E>(
  storage: Layer.Layer<A, E>,
  smtpUrl: string,
  options: { readonly script?: Script | undefined; readonly settings?: Partial<SequenceSettings>; readonly server?: SettingOverrides } = {}
) => {
  const server = testServer(onLiveClock(storage), { publicBaseUrl: "https://mail.example.test", mail: { from: testMailFrom }, ...options.server })
  const worker = SequenceWorker.layer.pipe(
    Layer.provideMerge(testDelivery(smtpUrl, { maxAttempts: 3 })),
    Layer.provideMerge(SequencesConfig.layerWith({ enabled: false, leaseMs: testSequenceLeaseMs, ...options.settings }))
  )
  return options.script === undefined
    ? worker.pipe(Layer.provideMerge(server))
    : worker.pipe(Layer.provideMerge(scriptedLlm(options.script)), Layer.provideMerge(server))
}

/** Another `SequenceWorker` over the same services: a second process's worker, for races. */
export const anotherSequenceWorker = Effect.provide(SequenceWorker.use(Effect.succeed), SequenceWorker.layer, { local: true })

/** Polls `poll` until it claims nothing; answers how many executions it claimed. */
export const drain = (poll: Effect.Effect<number>) =>
  Effect.gen(function*() {
    let claimed = 0
    while (true) {
      const count = yield* poll
      if (count === 0) return claimed
      claimed += count
    }
  })
