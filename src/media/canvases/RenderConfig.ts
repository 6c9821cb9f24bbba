import { Config, Context, Effect, Layer } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** The bounds of one canvas render (docs/canvases.md lists the environment variables). */
export interface RenderSettings {
  /** `RENDER_TIMEOUT_MS`: one render, load, frames and encoding included. */
  readonly timeoutMs: number
  /** `RENDER_SCRIPT_TIMEOUT_MS`: the page's load, and each frame's scripts. */
  readonly scriptTimeoutMs: number
  /** `RENDER_MAX_PIXELS`: device pixels of a still (width × height × scale²). */
  readonly maxPixels: number
  /** `RENDER_MAX_VIDEO_PIXELS`: device pixels of one video frame. */
  readonly maxVideoPixels: number
  /** `RENDER_MAX_BYTES`: the largest output kept. */
  readonly maxBytes: number
}

export const renderDefaults: RenderSettings = {
  timeoutMs: 120_000,
  scriptTimeoutMs: 5_000,
  maxPixels: 4096 * 4096,
  maxVideoPixels: 1920 * 1920,
  maxBytes: 50 * 1024 * 1024
}

export class RenderConfig extends Context.Service<RenderConfig, RenderSettings>()("canvases/RenderConfig") {
  static readonly fromEnv = Config.all({
    timeoutMs: positiveInt("RENDER_TIMEOUT_MS", renderDefaults.timeoutMs),
    scriptTimeoutMs: positiveInt("RENDER_SCRIPT_TIMEOUT_MS", renderDefaults.scriptTimeoutMs),
    maxPixels: positiveInt("RENDER_MAX_PIXELS", renderDefaults.maxPixels),
    maxVideoPixels: positiveInt("RENDER_MAX_VIDEO_PIXELS", renderDefaults.maxVideoPixels),
    maxBytes: positiveInt("RENDER_MAX_BYTES", renderDefaults.maxBytes)
  })

  static readonly layer = Layer.effect(RenderConfig, Effect.orDie(RenderConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<RenderSettings> = {}) =>
    Layer.succeed(RenderConfig, { ...renderDefaults, ...overrides })
}
