import { Effect } from "effect"
import { Authorized } from "../../auth/Policy.ts"
import { Ffmpeg } from "../../platform/Ffmpeg.ts"
import { outboundRefusal } from "../../platform/Outbound.ts"
import { Credits, payerOf } from "../../accounts/usage/Credits.ts"
import type { AudioFormat, SpeechRequest } from "./Api.ts"
import { AudioConfig } from "./AudioConfig.ts"
import { InvalidSpeechRequest, SpeechFailed, SpeechProviderLimited, SpeechProviderRejected } from "./Errors.ts"
import { LocalVoice, openAiVoiceNames } from "./LocalVoice.ts"
import { SpeechProvider } from "./SpeechProvider.ts"

/**
 * Text to speech in OpenAI's shape: through the configured provider, else
 * the offline local voice; billed per 1,000 characters under `audio`.
 * Decisions in docs/audio.md.
 */

/** OpenAI's speech models; without a provider the local voice serves each of them, and `local`. */
const openAiModels = ["tts-1", "tts-1-hd", "gpt-4o-mini-tts"]

export const contentTypes: Record<AudioFormat, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  opus: "audio/ogg"
}

export interface SpokenAudio {
  readonly bytes: Uint8Array
  readonly format: AudioFormat
  readonly contentType: string
}

type SpeechError = InvalidSpeechRequest | SpeechProviderLimited | SpeechProviderRejected | SpeechFailed

const invalid = (message: string) => new InvalidSpeechRequest({ message })

const providerRefusal = outboundRefusal({ limited: SpeechProviderLimited, rejected: SpeechProviderRejected, failed: SpeechFailed })

/** The voices the caller may ask for: the provider's, or the local voice's. */
export const voices = Effect.gen(function*() {
  yield* Authorized("audio:use")
  const provider = yield* SpeechProvider
  if (!provider.configured) return yield* Effect.flatMap(LocalVoice, (local) => local.voices)
  const settings = yield* AudioConfig
  const names = settings.providerVoices.length > 0 ? settings.providerVoices : Object.keys(openAiVoiceNames)
  return names.map((id) => ({ id, name: id, language: "multilingual" }))
})

/** What `characters` cost at `per1000` credits per 1,000 characters, rounded up to whole credits. */
export const speechCost = (characters: number, per1000: number) => Math.ceil((characters * per1000) / 1_000)

export const speak = Effect.fn("Speech.speak")(function*(request: typeof SpeechRequest.Type) {
  const { principal } = yield* Authorized("audio:use")
  const settings = yield* AudioConfig
  const provider = yield* SpeechProvider
  const format = request.response_format ?? "mp3"
  const speed = request.speed ?? 1
  const models = provider.configured ? [...openAiModels, ...settings.extraModels] : [...openAiModels, "local"]
  if (!models.includes(request.model)) {
    return yield* invalid(`Unknown model "${request.model}": speech models are ${models.join(", ")}`)
  }
  const known = yield* voices
  if (!known.some((voice) => voice.id === request.voice)) {
    const listed = known.slice(0, 20).map((voice) => voice.id).join(", ")
    return yield* invalid(`Unknown voice "${request.voice}": voices are ${listed}${known.length > 20 ? ", … (GET /api/v0/audio/voices lists them all)" : ""}`)
  }
  const characters = Array.from(request.input).length
  const credits = speechCost(characters, provider.configured ? settings.creditsPer1000Chars : settings.localCreditsPer1000Chars)
  const estimate = { feature: "audio", model: provider.configured ? request.model : "local", credits }
  const speech: Effect.Effect<Uint8Array, SpeechError, LocalVoice | AudioConfig | Ffmpeg> = provider.configured
    ? provider.speak({ model: request.model, input: request.input, voice: request.voice, response_format: format, speed }).pipe(
      Effect.map((audio) => audio.bytes),
      Effect.mapError(providerRefusal)
    )
    : localSpeech(request.input, request.voice, speed, format)
  const bytes = yield* Effect.flatMap(Credits, (ledger) =>
    ledger.withHold(payerOf(principal), estimate, (hold) => Effect.tap(speech, () => hold.report({ credits }))))
  return { bytes, format, contentType: contentTypes[format] } satisfies SpokenAudio
})

/** The local voice's WAV, encoded as `format`. */
const localSpeech = (text: string, voice: string, speed: number, format: AudioFormat) =>
  Effect.gen(function*() {
    const local = yield* LocalVoice
    const settings = yield* AudioConfig
    const synthesis = yield* local.speak(text, voice, speed)
    switch (synthesis.kind) {
      case "unknown-voice":
        return yield* invalid(`Unknown voice "${voice}"`)
      case "too-long":
        return yield* invalid(`The speech would exceed ${settings.maxBytes} bytes (SPEECH_MAX_BYTES): send a shorter input or a higher speed`)
      case "failed":
        return yield* new SpeechFailed({ message: synthesis.reason })
    }
    if (format === "wav") return synthesis.wav
    const ffmpeg = yield* Ffmpeg
    return yield* ffmpeg.run({
      args: ["-f", "wav", "-i", "pipe:0", ...encodings[format], "pipe:1"],
      input: synthesis.wav,
      timeoutMs: settings.timeoutMs,
      maxOutputBytes: settings.maxBytes
    }).pipe(Effect.mapError((failed) => new SpeechFailed({ message: `The speech could not be encoded as ${format}: ${failed.message}` })))
  })

/** ffmpeg's encoder arguments for the formats the local voice's WAV is converted to. */
const encodings: Record<Exclude<AudioFormat, "wav">, ReadonlyArray<string>> = {
  // Speech at 22 kHz mono: 64 kbit/s MP3 is transparent, Opus in Ogg needs half of it.
  mp3: ["-codec:a", "libmp3lame", "-b:a", "64k", "-f", "mp3"],
  opus: ["-codec:a", "libopus", "-b:a", "32k", "-ar", "24000", "-f", "ogg"]
}
