import { Config, Context, Effect, Layer } from "effect"
import { positiveInt, switchedOff } from "../../platform/AppConfig.ts"

/** The landing pages' settings (docs/landing-pages.md, README). */
export interface PagesSettings {
  /** `PAGE_SUBMISSIONS_PER_MINUTE`: form submissions one address may make to one page per minute. */
  readonly submissionsPerMinute: number
  /** `PAGE_CACHE_SECONDS`: how long browsers and shared caches may keep a published page before revalidating. */
  readonly cacheSeconds: number
  /**
   * `TRUST_FORWARDED_FOR` (`on`/`off`): take a visitor's address from the first `X-Forwarded-For` entry
   * (behind a reverse proxy that sets it); else the connection's address.
   */
  readonly trustForwardedFor: boolean
}

export const pagesDefaults: PagesSettings = {
  submissionsPerMinute: 30,
  cacheSeconds: 60,
  trustForwardedFor: false
}

export class PagesConfig extends Context.Service<PagesConfig, PagesSettings>()("pages/PagesConfig") {
  static readonly fromEnv = Config.all({
    submissionsPerMinute: positiveInt("PAGE_SUBMISSIONS_PER_MINUTE", pagesDefaults.submissionsPerMinute),
    cacheSeconds: positiveInt("PAGE_CACHE_SECONDS", pagesDefaults.cacheSeconds),
    trustForwardedFor: switchedOff("TRUST_FORWARDED_FOR")
  })

  static readonly layer = Layer.effect(PagesConfig, Effect.orDie(PagesConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<PagesSettings> = {}) =>
    Layer.succeed(PagesConfig, { ...pagesDefaults, ...overrides })
}
