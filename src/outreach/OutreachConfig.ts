import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { positiveInt } from "../platform/AppConfig.ts"

/**
 * The delivery settings campaigns and sequences share (docs/campaigns.md, README):
 * how many messages a process has in flight, how temporary failures are retried,
 * and the key of the tracking links.
 */
export interface OutreachSettings {
  /** `MAIL_CONCURRENCY`: messages in flight at once per sender in this process (the mailer's `MAIL_RATE_PER_SECOND` paces them; match `MAIL_POOL_SIZE`). */
  readonly concurrency: number
  /** `MAIL_MAX_ATTEMPTS`: deliveries of one message that failed temporarily (SMTP 4xx) before it is `failed`. */
  readonly maxAttempts: number
  /** `MAIL_RETRY_BASE_MS`: the wait after the first temporary failure; it doubles with each further one (at most an hour). */
  readonly retryBaseMs: number
  /** `TRACKING_SECRET`: signs tracking and unsubscribe links; none: generated once and kept in the database. */
  readonly trackingSecret: Option.Option<Redacted.Redacted>
}

export const outreachDefaults: OutreachSettings = {
  concurrency: 5,
  maxAttempts: 5,
  retryBaseMs: 60_000,
  trackingSecret: Option.none()
}

export class OutreachConfig extends Context.Service<OutreachConfig, OutreachSettings>()("outreach/OutreachConfig") {
  static readonly fromEnv = Config.all({
    concurrency: positiveInt("MAIL_CONCURRENCY", outreachDefaults.concurrency),
    maxAttempts: positiveInt("MAIL_MAX_ATTEMPTS", outreachDefaults.maxAttempts),
    retryBaseMs: positiveInt("MAIL_RETRY_BASE_MS", outreachDefaults.retryBaseMs),
    trackingSecret: Config.option(Config.Redacted("TRACKING_SECRET"))
  })

  static readonly layer = Layer.effect(OutreachConfig, Effect.orDie(OutreachConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<OutreachSettings>) =>
    Layer.succeed(OutreachConfig, { ...outreachDefaults, ...overrides })
}
