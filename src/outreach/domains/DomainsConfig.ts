import { Config, Context, Effect, Layer, Option } from "effect"

/** Settings of sending domains (docs/domains.md, README). `DNS_SERVERS` is the outbound guard's (`OutboundConfig`). */
export interface DomainsSettings {
  /** `SPF_INCLUDE`: the domain whose SPF record lists the mail relay's addresses; the domains' SPF must `include:` it. None: `mx`. */
  readonly spfInclude: Option.Option<string>
}

export const domainsDefaults: DomainsSettings = { spfInclude: Option.none() }

export class DomainsConfig extends Context.Service<DomainsConfig, DomainsSettings>()("domains/DomainsConfig") {
  static readonly fromEnv = Config.all({
    spfInclude: Config.option(Config.NonEmptyString("SPF_INCLUDE"))
  })

  static readonly layer = Layer.effect(DomainsConfig, Effect.orDie(DomainsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<DomainsSettings> = {}) =>
    Layer.succeed(DomainsConfig, { ...domainsDefaults, ...overrides })
}
