import { Config, Context, Effect, Layer, Option, type Redacted } from "effect"
import { commaList, positiveInt } from "../../platform/AppConfig.ts"

/** Image generation and transformation (docs/images.md, README). */
export interface ImagesSettings {
  /** `IMAGES_BASE_URL`: the OpenAI-compatible images provider (`…/v1`). */
  readonly baseUrl: string
  /** `IMAGES_API_KEY`; none: image generation answers 403. */
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** `IMAGES_MODELS`: model names the provider serves besides OpenAI's (comma-separated). */
  readonly extraModels: ReadonlyArray<string>
  /** `IMAGES_TIMEOUT_MS`: bounds each attempt (generating takes tens of seconds). */
  readonly timeoutMs: number
  /** `IMAGES_MAX_RETRIES`: retries after 429, 5xx or a network failure. */
  readonly maxRetries: number
  /** `IMAGES_CREDITS_PER_IMAGE`: what one generated image costs. */
  readonly creditsPerImage: number
  /** `IMAGE_MAX_BYTES`: the largest file `/images/transform` accepts. */
  readonly maxBytes: number
  /** `IMAGE_MAX_PIXELS`: the most pixels an input image may declare (decompression bombs stop here). */
  readonly maxInputPixels: number
  /** `IMAGE_MAX_DIMENSION`: the largest width or height a transform may produce. */
  readonly maxDimension: number
  /** `IMAGE_TRANSFORMS`: transforms holding an image in memory at once; more wait their turn. */
  readonly transforms: number
}

export const imagesDefaults: ImagesSettings = {
  baseUrl: "https://api.openai.com/v1",
  apiKey: Option.none(),
  extraModels: [],
  timeoutMs: 120_000,
  maxRetries: 2,
  creditsPerImage: 40,
  maxBytes: 20 * 1024 * 1024,
  maxInputPixels: 40_000_000,
  maxDimension: 8_192,
  transforms: 4
}

export class ImagesConfig extends Context.Service<ImagesConfig, ImagesSettings>()("images/ImagesConfig") {
  static readonly fromEnv = Config.all({
    baseUrl: Config.String("IMAGES_BASE_URL").pipe(Config.withDefault(imagesDefaults.baseUrl)),
    apiKey: Config.option(Config.Redacted("IMAGES_API_KEY")),
    extraModels: commaList("IMAGES_MODELS"),
    timeoutMs: positiveInt("IMAGES_TIMEOUT_MS", imagesDefaults.timeoutMs),
    maxRetries: Config.Int("IMAGES_MAX_RETRIES").pipe(Config.withDefault(imagesDefaults.maxRetries)),
    creditsPerImage: positiveInt("IMAGES_CREDITS_PER_IMAGE", imagesDefaults.creditsPerImage),
    maxBytes: positiveInt("IMAGE_MAX_BYTES", imagesDefaults.maxBytes),
    maxInputPixels: positiveInt("IMAGE_MAX_PIXELS", imagesDefaults.maxInputPixels),
    maxDimension: positiveInt("IMAGE_MAX_DIMENSION", imagesDefaults.maxDimension),
    transforms: positiveInt("IMAGE_TRANSFORMS", imagesDefaults.transforms)
  })

  static readonly layer = Layer.effect(ImagesConfig, Effect.orDie(ImagesConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<ImagesSettings> = {}) =>
    Layer.succeed(ImagesConfig, { ...imagesDefaults, ...overrides })
}
