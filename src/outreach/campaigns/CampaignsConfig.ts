import { Config, Context, Effect, Layer } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/** The campaign workers' own settings (delivery's are `OutreachConfig`'s); docs/campaigns.md and the README list the environment variables. */
export interface CampaignSettings {
  /** `CAMPAIGN_WORKER` (`on`/`off`): whether this process starts scheduled campaigns and delivers recipients. */
  readonly enabled: boolean
  /** `MAIL_BATCH_SIZE`: recipients claimed per lease. */
  readonly batchSize: number
  /** `MAIL_LEASE_MS`: how long a claim holds without renewal; a crashed worker's recipients are retried after it. */
  readonly leaseMs: number
  /** `MAIL_POLL_MS`: the pause between polls when nothing was left to do. */
  readonly pollMs: number
}

export const campaignDefaults: CampaignSettings = {
  enabled: true,
  batchSize: 200,
  leaseMs: 120_000,
  pollMs: 1_000
}

export class CampaignsConfig extends Context.Service<CampaignsConfig, CampaignSettings>()("campaigns/CampaignsConfig") {
  static readonly fromEnv = Config.all({
    enabled: switchedOn("CAMPAIGN_WORKER"),
    batchSize: positiveInt("MAIL_BATCH_SIZE", campaignDefaults.batchSize),
    leaseMs: positiveInt("MAIL_LEASE_MS", campaignDefaults.leaseMs),
    pollMs: positiveInt("MAIL_POLL_MS", campaignDefaults.pollMs)
  })

  static readonly layer = Layer.effect(CampaignsConfig, Effect.orDie(CampaignsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<CampaignSettings>) =>
    Layer.succeed(CampaignsConfig, { ...campaignDefaults, ...overrides })
}
