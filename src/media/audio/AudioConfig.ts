import { Config, Context, Effect, Layer, Option, type Redacted } from "effect"
import { commaList, positiveInt } from "../../platform/AppConfig.ts"

/** Speech synthesis (docs/audio.md, README). */
export interface AudioSettings {
  /** `SPEECH_BASE_URL`: an OpenAI-compatible speech provider (`…/v1`); with `SPEECH_API_KEY` alone, OpenAI's. */
  readonly baseUrl: Option.Option<string>
  /** `SPEECH_API_KEY`: sent to the provider as a bearer token. */
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** `SPEECH_VOICES`: the provider's voices (comma-separated); none: OpenAI's. */
  readonly providerVoices: ReadonlyArray<string>
  /** `SPEECH_MODELS`: model names the provider serves besides OpenAI's (comma-separated). */
  readonly extraModels: ReadonlyArray<string>
  /** `SPEECH_TIMEOUT_MS`: bounds each provider attempt, and each local synthesis. */
  readonly timeoutMs: number
  /** `SPEECH_MAX_RETRIES`: retries after 429, 5xx or a network failure. */
  readonly maxRetries: number
  /** `SPEECH_CREDITS_PER_1000_CHARS`: the provider's price. */
  readonly creditsPer1000Chars: number
  /** `LOCAL_SPEECH_CREDITS_PER_1000_CHARS`: the local voice's price. */
  readonly localCreditsPer1000Chars: number
  /** `SPEECH_WORKERS`: threads synthesizing with the local voice at once. */
  readonly workers: number
  /** `SPEECH_WORKER_MEMORY_MB`: each such thread's heap limit. */
  readonly workerMemoryMb: number
  /** `SPEECH_MAX_BYTES`: the largest audio answered (a provider's, or an encoding's). */
  readonly maxBytes: number
}

export const audioDefaults: AudioSettings = {
  baseUrl: Option.none(),
  apiKey: Option.none(),
  providerVoices: [],
  extraModels: [],
  timeoutMs: 120_000,
  maxRetries: 2,
  creditsPer1000Chars: 15,
  localCreditsPer1000Chars: 1,
  workers: 1,
  workerMemoryMb: 256,
  maxBytes: 50 * 1024 * 1024
}

export class AudioConfig extends Context.Service<AudioConfig, AudioSettings>()("audio/AudioConfig") {
  static readonly fromEnv = Config.all({
    baseUrl: Config.option(Config.NonEmptyString("SPEECH_BASE_URL")),
    apiKey: Config.option(Config.Redacted("SPEECH_API_KEY")),
    providerVoices: commaList("SPEECH_VOICES"),
    extraModels: commaList("SPEECH_MODELS"),
    timeoutMs: positiveInt("SPEECH_TIMEOUT_MS", audioDefaults.timeoutMs),
    maxRetries: Config.Int("SPEECH_MAX_RETRIES").pipe(Config.withDefault(audioDefaults.maxRetries)),
    creditsPer1000Chars: positiveInt("SPEECH_CREDITS_PER_1000_CHARS", audioDefaults.creditsPer1000Chars),
    localCreditsPer1000Chars: positiveInt("LOCAL_SPEECH_CREDITS_PER_1000_CHARS", audioDefaults.localCreditsPer1000Chars),
    workers: positiveInt("SPEECH_WORKERS", audioDefaults.workers),
    workerMemoryMb: positiveInt("SPEECH_WORKER_MEMORY_MB", audioDefaults.workerMemoryMb),
    maxBytes: positiveInt("SPEECH_MAX_BYTES", audioDefaults.maxBytes)
  })

  static readonly layer = Layer.effect(AudioConfig, Effect.orDie(AudioConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<AudioSettings> = {}) =>
    Layer.succeed(AudioConfig, { ...audioDefaults, ...overrides })
}
