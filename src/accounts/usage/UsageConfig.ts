import { Config, Context, Effect, Layer, Option } from "effect"
import { positive, positiveInt } from "../../platform/AppConfig.ts"

/** How credits are held and committed (docs/usage-and-credits.md, README). */
export interface UsageSettings {
  /** `CREDIT_HOLD_TTL_MS`: how long credits held for a call survive without renewal (a crashed process's holds are released after it). */
  readonly holdTtlMs: number
  /** `CREDIT_FLUSH_MS`: how long settled calls wait to be committed together (group commit): the crash window of usage. 5 ms on PostgreSQL, 50 ms embedded. */
  readonly flushMs: number
  /** `CREDIT_LEASE_IDLE_MS`: how long a process keeps a lease no call uses before it returns it to the pool. */
  readonly leaseIdleMs: number
}

export const usageDefaults: UsageSettings = {
  holdTtlMs: 120_000,
  flushMs: 5,
  leaseIdleMs: 1_000
}

export class UsageConfig extends Context.Service<UsageConfig, UsageSettings>()("usage/UsageConfig") {
  static readonly fromEnv = Config.all({
    holdTtlMs: Config.Int("CREDIT_HOLD_TTL_MS").pipe(Config.withDefault(usageDefaults.holdTtlMs)),
    flushMs: Config.option(positive("CREDIT_FLUSH_MS")),
    leaseIdleMs: positiveInt("CREDIT_LEASE_IDLE_MS", usageDefaults.leaseIdleMs),
    databaseUrl: Config.option(Config.Redacted("DATABASE_URL"))
  }).pipe(Config.map(({ databaseUrl, flushMs, ...settings }): UsageSettings => ({
    ...settings,
    // An embedded commit costs its one database thread ~1 ms however small: fewer, larger groups there.
    flushMs: Option.getOrElse(flushMs, () => (Option.isSome(databaseUrl) ? 5 : 50))
  })))

  static readonly layer = Layer.effect(UsageConfig, Effect.orDie(UsageConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<UsageSettings> = {}) =>
    Layer.succeed(UsageConfig, { ...usageDefaults, ...overrides })
}
