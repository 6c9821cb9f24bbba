import { Config, Context, Effect, Layer } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** The design chats' settings (docs/design-chat.md, README). */
export interface DesignSettings {
  /** `DESIGN_CHAT_MODEL`: the model (or tier) of the chats. */
  readonly model: string
  /** `DESIGN_CHAT_MAX_ROUNDS`: model calls per chat message. */
  readonly maxRounds: number
  /** `DESIGN_CHAT_TIMEOUT_MS`: a chat message's wall-clock limit. */
  readonly timeoutMs: number
}

export const designDefaults: DesignSettings = {
  model: "balanced",
  maxRounds: 12,
  timeoutMs: 180_000
}

export class DesignConfig extends Context.Service<DesignConfig, DesignSettings>()("design/DesignConfig") {
  static readonly fromEnv = Config.all({
    model: Config.String("DESIGN_CHAT_MODEL").pipe(Config.withDefault(designDefaults.model)),
    maxRounds: positiveInt("DESIGN_CHAT_MAX_ROUNDS", designDefaults.maxRounds),
    timeoutMs: positiveInt("DESIGN_CHAT_TIMEOUT_MS", designDefaults.timeoutMs)
  })

  static readonly layer = Layer.effect(DesignConfig, Effect.orDie(DesignConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<DesignSettings> = {}) =>
    Layer.succeed(DesignConfig, { ...designDefaults, ...overrides })
}
