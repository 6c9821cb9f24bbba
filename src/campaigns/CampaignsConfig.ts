import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { positiveInt, switchedOn } from "../platform/AppConfig.ts"

/** The campaign workers' settings; docs/campaigns.md and the README list the environment variables. */
export interface CampaignSettings {
  /** `CAMPAIGN_WORKER` (`on`/`off`): whether this process starts scheduled campaigns and delivers recipients. */
  readonly enabled: boolean
  /** `MAIL_CONCURRENCY`: messages in flight at once in this process (the mailer's `MAIL_RATE_PER_SECOND` paces them; match `MAIL_POOL_SIZE`). */
  readonly concurrency: number
  /** `MAIL_BATCH_SIZE`: recipients claimed per lease. */
  readonly batchSize: number
  /** `MAIL_LEASE_MS`: how long a claim holds without renewal; a crashed worker's recipients are retried after it. */
  readonly leaseMs: number
  /** `MAIL_POLL_MS`: the pause between polls when nothing was left to do. */
  readonly pollMs: number
  /** `MAIL_MAX_ATTEMPTS`: deliveries of one recipient that failed temporarily (SMTP 4xx) before it is `failed`. */
  readonly maxAttempts: number
  /** `MAIL_RETRY_BASE_MS`: the wait after the first temporary failure; it doubles with each further one (at most an hour). */
  readonly retryBaseMs: number
  /** `TRACKING_SECRET`: signs tracking and unsubscribe links; none: generated once and kept in the database. */
  readonly trackingSecret: Option.Option<Redacted.Redacted>
}

export const campaignDefaults: CampaignSettings = {
  enabled: true,
  concurrency: 5,
  batchSize: 200,
  leaseMs: 120_000,
  pollMs: 1_000,
  maxAttempts: 5,
  retryBaseMs: 60_000,
  trackingSecret: Option.none()
}

export class CampaignsConfig extends Context.Service<CampaignsConfig, CampaignSettings>()("campaigns/CampaignsConfig") {
  static readonly fromEnv = Config.all({
    enabled: switchedOn("CAMPAIGN_WORKER"),
    concurrency: positiveInt("MAIL_CONCURRENCY", campaignDefaults.concurrency),
    batchSize: positiveInt("MAIL_BATCH_SIZE", campaignDefaults.batchSize),
    leaseMs: positiveInt("MAIL_LEASE_MS", campaignDefaults.leaseMs),
    pollMs: positiveInt("MAIL_POLL_MS", campaignDefaults.pollMs),
    maxAttempts: positiveInt("MAIL_MAX_ATTEMPTS", campaignDefaults.maxAttempts),
    retryBaseMs: positiveInt("MAIL_RETRY_BASE_MS", campaignDefaults.retryBaseMs),
    trackingSecret: Config.option(Config.Redacted("TRACKING_SECRET"))
  })

  static readonly layer = Layer.effect(CampaignsConfig, Effect.orDie(CampaignsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<CampaignSettings>) =>
    Layer.succeed(CampaignsConfig, { ...campaignDefaults, ...overrides })
}
