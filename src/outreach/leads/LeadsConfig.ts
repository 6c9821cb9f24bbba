import { Config, Context, Effect, Layer } from "effect"

/** The settings of leads and contact lists (docs/leads.md, docs/lists.md, README). */
export interface LeadsSettings {
  /** `IMPORT_MAX_BYTES`: the largest CSV file a lead or contact-list import accepts. */
  readonly importMaxBytes: number
}

export const leadsDefaults: LeadsSettings = {
  importMaxBytes: 20 * 1024 * 1024
}

export class LeadsConfig extends Context.Service<LeadsConfig, LeadsSettings>()("leads/LeadsConfig") {
  static readonly fromEnv = Config.all({
    importMaxBytes: Config.Int("IMPORT_MAX_BYTES").pipe(Config.withDefault(leadsDefaults.importMaxBytes))
  })

  static readonly layer = Layer.effect(LeadsConfig, Effect.orDie(LeadsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<LeadsSettings> = {}) =>
    Layer.succeed(LeadsConfig, { ...leadsDefaults, ...overrides })
}
