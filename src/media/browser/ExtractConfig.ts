import { Config, Context, Effect, Layer } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** Bounds of one browser extraction (docs/browser.md lists the environment variables). */
export interface ExtractSettings {
  /** `BROWSER_TIMEOUT_MS`: loading the page and running its actions. */
  readonly timeoutMs: number
  /** `BROWSER_MAX_BYTES`: the bytes of every response the page receives, together. */
  readonly maxBytes: number
}

export const extractDefaults: ExtractSettings = {
  timeoutMs: 15_000,
  maxBytes: 20 * 1024 * 1024
}

export class ExtractConfig extends Context.Service<ExtractConfig, ExtractSettings>()("browser/ExtractConfig") {
  static readonly fromEnv = Config.all({
    timeoutMs: positiveInt("BROWSER_TIMEOUT_MS", extractDefaults.timeoutMs),
    maxBytes: positiveInt("BROWSER_MAX_BYTES", extractDefaults.maxBytes)
  })

  static readonly layer = Layer.effect(ExtractConfig, Effect.orDie(ExtractConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<ExtractSettings> = {}) =>
    Layer.succeed(ExtractConfig, { ...extractDefaults, ...overrides })
}
