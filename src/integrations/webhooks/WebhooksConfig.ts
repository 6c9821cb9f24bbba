import { Config, Context, Effect, Layer } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/** The webhook delivery worker's settings; docs/webhooks.md lists the environment variables. */
export interface WebhooksSettings {
  /** `WEBHOOKS_WORKER` (`on`/`off`): whether this process delivers webhooks. */
  readonly workerEnabled: boolean
  /** `WEBHOOKS_POLL_MS`: the pause between polls that found nothing to do. */
  readonly pollMs: number
  /** `WEBHOOKS_LEASE_MS`: how long a claimed delivery is held without renewal (well above `OUTBOUND_TIMEOUT_MS`). */
  readonly leaseMs: number
  /** `WEBHOOKS_CONCURRENCY`: deliveries one poll claims and sends at once. */
  readonly concurrency: number
  /** `WEBHOOKS_MAX_ATTEMPTS`: attempts of one delivery before it is `failed`. */
  readonly maxAttempts: number
  /** `WEBHOOKS_RETRY_BASE_MS`: the wait after the first failed attempt; each later wait doubles. */
  readonly retryBaseMs: number
  /** `WEBHOOKS_RETRY_MAX_MS`: the longest wait between two attempts. */
  readonly retryMaxMs: number
}

/**
 * 13 attempts, waits from 30 s doubling up to 8 h (±20 % jitter): the last
 * attempt comes about 24 hours after the first.
 */
export const webhooksDefaults: WebhooksSettings = {
  workerEnabled: true,
  pollMs: 500,
  leaseMs: 60_000,
  concurrency: 16,
  maxAttempts: 13,
  retryBaseMs: 30_000,
  retryMaxMs: 8 * 3_600_000
}

export class WebhooksConfig extends Context.Service<WebhooksConfig, WebhooksSettings>()("webhooks/WebhooksConfig") {
  static readonly fromEnv = Config.all({
    workerEnabled: switchedOn("WEBHOOKS_WORKER"),
    pollMs: positiveInt("WEBHOOKS_POLL_MS", webhooksDefaults.pollMs),
    leaseMs: positiveInt("WEBHOOKS_LEASE_MS", webhooksDefaults.leaseMs),
    concurrency: positiveInt("WEBHOOKS_CONCURRENCY", webhooksDefaults.concurrency),
    maxAttempts: positiveInt("WEBHOOKS_MAX_ATTEMPTS", webhooksDefaults.maxAttempts),
    retryBaseMs: positiveInt("WEBHOOKS_RETRY_BASE_MS", webhooksDefaults.retryBaseMs),
    retryMaxMs: positiveInt("WEBHOOKS_RETRY_MAX_MS", webhooksDefaults.retryMaxMs)
  })

  static readonly layer = Layer.effect(WebhooksConfig, Effect.orDie(WebhooksConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<WebhooksSettings>) =>
    Layer.succeed(WebhooksConfig, { ...webhooksDefaults, ...overrides })
}
