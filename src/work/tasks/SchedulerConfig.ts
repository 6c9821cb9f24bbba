import { Config, Context, Effect, Layer } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/** The scheduler's settings; docs/tasks.md lists the environment variables. */
export interface SchedulerSettings {
  /** `SCHEDULER` (`on`/`off`): whether this process runs the background worker. */
  readonly enabled: boolean
  /** `SCHEDULER_POLL_MS`: the pause between polls when no due task was left over. */
  readonly pollMs: number
  /** `SCHEDULER_LEASE_MS`: how long a claim holds without renewal; a crashed worker's tasks are retried after it. */
  readonly leaseMs: number
  /** `SCHEDULER_CONCURRENCY`: tasks claimed per poll and run at once by this process. */
  readonly concurrency: number
  /** `SCHEDULER_RUN_TIMEOUT_MS`: a run (its model calls and tools) taking longer fails. */
  readonly runTimeoutMs: number
  /** `SCHEDULER_MAX_ROUNDS`: model calls per run, when the task's tools are used. */
  readonly maxRounds: number
  /** `SCHEDULER_MODEL`: the model when neither the task's contextSettings nor its employee names one. */
  readonly defaultModel: string
}

export const schedulerDefaults: SchedulerSettings = {
  enabled: true,
  pollMs: 1_000,
  leaseMs: 60_000,
  concurrency: 16,
  runTimeoutMs: 300_000,
  maxRounds: 8,
  defaultModel: "balanced"
}

export class SchedulerConfig extends Context.Service<SchedulerConfig, SchedulerSettings>()("tasks/SchedulerConfig") {
  static readonly fromEnv = Config.all({
    enabled: switchedOn("SCHEDULER"),
    pollMs: positiveInt("SCHEDULER_POLL_MS", schedulerDefaults.pollMs),
    leaseMs: positiveInt("SCHEDULER_LEASE_MS", schedulerDefaults.leaseMs),
    concurrency: positiveInt("SCHEDULER_CONCURRENCY", schedulerDefaults.concurrency),
    runTimeoutMs: positiveInt("SCHEDULER_RUN_TIMEOUT_MS", schedulerDefaults.runTimeoutMs),
    maxRounds: positiveInt("SCHEDULER_MAX_ROUNDS", schedulerDefaults.maxRounds),
    defaultModel: Config.String("SCHEDULER_MODEL").pipe(Config.withDefault(schedulerDefaults.defaultModel))
  })

  static readonly layer = Layer.effect(SchedulerConfig, Effect.orDie(SchedulerConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<SchedulerSettings>) =>
    Layer.succeed(SchedulerConfig, { ...schedulerDefaults, ...overrides })
}
