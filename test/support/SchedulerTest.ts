import { Clock, Layer } from "effect"
import { KnowledgeSettingsLive } from "../../src/work/documents/Http.ts"
import { Scheduler } from "../../src/work/tasks/Scheduler.ts"
import { SchedulerConfig, type SchedulerSettings } from "../../src/work/tasks/SchedulerConfig.ts"
import { type Script, scriptedLlm } from "./ScriptedLlm.ts"
import { testServer } from "./TestServer.ts"

export const testLeaseMs = 60_000

/**
 * Storage on real time while the service runs on `TestClock`: the PostgreSQL
 * pool keeps timers, and a test clock moved by years would replay them all.
 */
export const onLiveClock = <A, E>(storage: Layer.Layer<A, E>) =>
  storage.pipe(Layer.provide(Layer.succeed(Clock.Clock, Clock.Clock.defaultValue())))

/**
 * The test server plus a `Scheduler` over the same storage and a scripted
 * `Llm`; no background worker runs: tests call `Scheduler.runDue` and move
 * time with `TestClock`.
 */
export const schedulerTestServer = <A, E>(
  storage: Layer.Layer<A, E>,
  script: Script = {},
  settings: Partial<SchedulerSettings> = {}
) =>
  Scheduler.layer.pipe(
    Layer.provideMerge(scriptedLlm(script)),
    Layer.provideMerge(KnowledgeSettingsLive),
    Layer.provideMerge(SchedulerConfig.layerWith({ enabled: false, leaseMs: testLeaseMs, ...settings })),
    Layer.provideMerge(testServer(onLiveClock(storage)))
  )
