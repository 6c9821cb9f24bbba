import { Config, Context, Effect, Layer, Option, Redacted, Result, Schema, SchemaIssue } from "effect"
import { normalizeDomain } from "../domains/DomainName.ts"
import { positiveInt } from "../../platform/AppConfig.ts"

/**
 * The delivery settings campaigns and sequences share (docs/campaigns.md, README):
 * how many messages a process has in flight, how temporary failures are retried,
 * the key of the tracking links, and the domain of the reply addresses.
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
  /**
   * `INBOUND_REPLY_DOMAIN`: outreach e-mail not sent through a mailbox gets a `Reply-To` of an address the
   * platform issued for it at this domain (unless the campaign names its own), taken by inbound SMTP; none: no reply addresses.
   */
  readonly replyDomain: Option.Option<string>
}

export const outreachDefaults: OutreachSettings = {
  concurrency: 5,
  maxAttempts: 5,
  retryBaseMs: 60_000,
  trackingSecret: Option.none(),
  replyDomain: Option.none()
}

const replyDomain = Config.option(Config.String("INBOUND_REPLY_DOMAIN")).pipe(Config.flatMap((value) => {
  if (Option.isNone(value)) return Config.succeed(Option.none<string>())
  const domain = normalizeDomain(value.value)
  return Result.isSuccess(domain)
    ? Config.succeed(Option.some(domain.success))
    : Config.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: `INBOUND_REPLY_DOMAIN: ${domain.failure}` })))
}))

export class OutreachConfig extends Context.Service<OutreachConfig, OutreachSettings>()("outreach/OutreachConfig") {
  static readonly fromEnv = Config.all({
    concurrency: positiveInt("MAIL_CONCURRENCY", outreachDefaults.concurrency),
    maxAttempts: positiveInt("MAIL_MAX_ATTEMPTS", outreachDefaults.maxAttempts),
    retryBaseMs: positiveInt("MAIL_RETRY_BASE_MS", outreachDefaults.retryBaseMs),
    trackingSecret: Config.option(Config.Redacted("TRACKING_SECRET")),
    replyDomain
  })

  static readonly layer = Layer.effect(OutreachConfig, Effect.orDie(OutreachConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<OutreachSettings>) =>
    Layer.succeed(OutreachConfig, { ...outreachDefaults, ...overrides })
}
