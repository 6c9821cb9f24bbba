import { Config, Context, Effect, Layer } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/**
 * The sequence worker's settings (docs/sequences.md, README). Sending uses
 * the mail settings of campaigns (`MAIL_CONCURRENCY`, `MAIL_MAX_ATTEMPTS`,
 * `MAIL_RETRY_BASE_MS`).
 */
export interface SequenceSettings {
  /** `SEQUENCE_WORKER` (`on`/`off`): whether this process drafts and sends sequence executions. */
  readonly enabled: boolean
  /** `SEQUENCE_DRAFT_CONCURRENCY`: model calls in flight at once in this process. */
  readonly draftConcurrency: number
  /** `SEQUENCE_BATCH_SIZE`: executions claimed per lease. */
  readonly batchSize: number
  /** `SEQUENCE_LEASE_MS`: how long a claim holds without renewal; a crashed worker's drafts are retried after it. */
  readonly leaseMs: number
  /** `SEQUENCE_POLL_MS`: the pause between polls when nothing was left to do. */
  readonly pollMs: number
}

export const sequenceDefaults: SequenceSettings = {
  enabled: true,
  draftConcurrency: 4,
  batchSize: 50,
  leaseMs: 120_000,
  pollMs: 1_000
}

export class SequencesConfig extends Context.Service<SequencesConfig, SequenceSettings>()("sequences/SequencesConfig") {
  static readonly fromEnv = Config.all({
    enabled: switchedOn("SEQUENCE_WORKER"),
    draftConcurrency: positiveInt("SEQUENCE_DRAFT_CONCURRENCY", sequenceDefaults.draftConcurrency),
    batchSize: positiveInt("SEQUENCE_BATCH_SIZE", sequenceDefaults.batchSize),
    leaseMs: positiveInt("SEQUENCE_LEASE_MS", sequenceDefaults.leaseMs),
    pollMs: positiveInt("SEQUENCE_POLL_MS", sequenceDefaults.pollMs)
  })

  static readonly layer = Layer.effect(SequencesConfig, Effect.orDie(SequencesConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<SequenceSettings>) =>
    Layer.succeed(SequencesConfig, { ...sequenceDefaults, ...overrides })
}
