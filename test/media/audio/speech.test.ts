import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { parseBuffer } from "music-metadata"
import OpenAI from "openai"
import { longestTurn } from "../../support/EventLoop.ts"
import { loopbackServer, sdkClients, sdkError } from "../../support/LoopbackServer.ts"
import { startStubSpeechProvider, type StubSpeechProvider } from "../../support/StubSpeechProvider.ts"
import { backends, type Tenant } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

class Stub extends Context.Service<Stub, StubSpeechProvider>()("test/StubSpeechProvider") {}

const localPrice = 10
const providerPrice = 15

/** The SDK's speech as bytes. */
const speech = (openai: OpenAI, body: OpenAI.Audio.SpeechCreateParams) =>
  Effect.promise(async () => {
    const response = await openai.audio.speech.create(body)
    return { type: response.headers.get("content-type"), bytes: new Uint8Array(await response.arrayBuffer()) }
  })

/** `GET /audio/voices` with the SDK's plain request method (OpenAI has no such operation). */
const listVoices = (openai: OpenAI) =>
  Effect.promise(() => openai.get("/audio/voices") as Promise<{ voices: Array<{ id: string; name: string; language: string }> }>)

/** Duration and format as an independent parser reads them. */
const probe = (bytes: Uint8Array) => Effect.promise(() => parseBuffer(bytes).then((parsed) => parsed.format))

const creditUsage = (tenant: Tenant) =>
  Effect.map(settledOrganization(tenant.organizationId), (organization) => Option.getOrThrow(organization).creditUsage)

const sentence = "The quick brown fox jumps over the lazy dog, and then it takes a well earned nap in the sun."

describe.each(backends)("speech with the local voice on $name", ({ storage }) => {
  it.layer(loopbackServer(storage, { audio: { localCreditsPer1000Chars: localPrice } }), { excludeTestServices: true, timeout: 120_000 })(
    (it) => {
      it.effect("the OpenAI SDK's audio.speech.create gets a real WAV: RIFF/WAVE header, mono 16-bit, a plausible duration", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-wav")
          const { type, bytes } = yield* speech(openai, { model: "tts-1", voice: "alloy", input: sentence, response_format: "wav" })
          expect(type).toBe("audio/wav")
          expect(Buffer.from(bytes.slice(0, 4)).toString("latin1")).toBe("RIFF")
          expect(Buffer.from(bytes.slice(8, 12)).toString("latin1")).toBe("WAVE")
          const format = yield* probe(bytes)
          expect(format).toMatchObject({ container: "WAVE", numberOfChannels: 1, bitsPerSample: 16, sampleRate: 22_050 })
          // About 19 words at eSpeak NG's 175 words a minute.
          expect(format.duration).toBeGreaterThan(3)
          expect(format.duration).toBeLessThan(12)
        }))

      it.effect("mp3 (the default) and opus are encoded by ffmpeg: MPEG frames and an Ogg stream as long as the WAV", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-encoded")
          const wav = yield* probe((yield* speech(openai, { model: "tts-1", voice: "nova", input: sentence, response_format: "wav" })).bytes)
          const mp3 = yield* speech(openai, { model: "tts-1", voice: "nova", input: sentence })
          expect(mp3.type).toBe("audio/mpeg")
          const id3 = Buffer.from(mp3.bytes.slice(0, 3)).toString("latin1") === "ID3"
          const frameSync = mp3.bytes[0] === 0xff && (mp3.bytes[1]! & 0xe0) === 0xe0
          expect(id3 || frameSync).toBe(true)
          const mp3Format = yield* probe(mp3.bytes)
          // 22.05 kHz speech is MPEG-2 (its low sampling frequencies) layer III.
          expect(mp3Format).toMatchObject({ container: "MPEG", codec: "MPEG 2 Layer 3", sampleRate: 22_050, numberOfChannels: 1 })
          expect(Math.abs(mp3Format.duration! - wav.duration!)).toBeLessThan(0.3)
          const opus = yield* speech(openai, { model: "tts-1", voice: "nova", input: sentence, response_format: "opus" })
          expect(opus.type).toBe("audio/ogg")
          expect(Buffer.from(opus.bytes.slice(0, 4)).toString("latin1")).toBe("OggS")
          const opusFormat = yield* probe(opus.bytes)
          expect(opusFormat).toMatchObject({ container: "Ogg", codec: "Opus", numberOfChannels: 1 })
          expect(Math.abs(opusFormat.duration! - wav.duration!)).toBeLessThan(0.3)
        }))

      it.effect("speed changes the duration; voices and languages sound different", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-speed")
          const normal = yield* probe((yield* speech(openai, { model: "local", voice: "en-us", input: sentence, response_format: "wav" })).bytes)
          const fast = yield* probe((yield* speech(openai, { model: "local", voice: "en-us", input: sentence, response_format: "wav", speed: 2 })).bytes)
          expect(fast.duration! / normal.duration!).toBeGreaterThan(0.35)
          expect(fast.duration! / normal.duration!).toBeLessThan(0.65)
          const onyx = yield* speech(openai, { model: "tts-1", voice: "onyx", input: "Hello there", response_format: "wav" })
          const shimmer = yield* speech(openai, { model: "tts-1", voice: "shimmer", input: "Hello there", response_format: "wav" })
          expect(Buffer.from(onyx.bytes).equals(Buffer.from(shimmer.bytes))).toBe(false)
          const german = yield* speech(openai, { model: "tts-1", voice: "de", input: "Guten Morgen, wie geht es dir?", response_format: "wav" })
          expect((yield* probe(german.bytes)).duration).toBeGreaterThan(0.5)
        }))

      it.effect("GET /audio/voices lists OpenAI's names and eSpeak NG's languages", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-voices")
          const { voices } = yield* listVoices(openai)
          expect(voices.slice(0, 2)).toEqual([
            { id: "alloy", name: "Alloy", language: "en-us" },
            { id: "ash", name: "Ash", language: "en-us" }
          ])
          expect(voices).toContainEqual({ id: "en-us", name: "English (America)", language: "en-us" })
          expect(voices).toContainEqual(expect.objectContaining({ id: "de", language: "de" }))
          expect(voices.length).toBeGreaterThan(100)
          expect(new Set(voices.map((voice) => voice.id)).size).toBe(voices.length)
        }))

      it.effect("bills per 1,000 characters under `audio`, rounded up; a refused request costs nothing", () =>
        Effect.gen(function*() {
          const { tenant, openai } = yield* sdkClients("speech-billing")
          const before = yield* creditUsage(tenant)
          const input = "word ".repeat(50).trim() // 249 characters
          yield* speech(openai, { model: "tts-1", voice: "alloy", input, response_format: "wav" })
          expect((yield* creditUsage(tenant)) - before).toBe(Math.ceil((249 * localPrice) / 1000))
          const events = yield* usageHistory(tenant.organizationId, { featureKey: "audio" })
          expect(events.events.map((event) => [event.feature, event.model, event.credits])).toEqual([["audio", "local", 3]])
          yield* sdkError(() => openai.audio.speech.create({ model: "tts-1", voice: "nobody", input }))
          expect((yield* creditUsage(tenant)) - before).toBe(3)
        }))

      it.effect("bad input answers 400 naming the problem", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-bad")
          const cases: ReadonlyArray<[OpenAI.Audio.SpeechCreateParams, RegExp]> = [
            [{ model: "tts-1", voice: "nobody", input: "hi" }, /Unknown voice "nobody": voices are alloy, ash/],
            [{ model: "tts-9", voice: "alloy", input: "hi" }, /Unknown model "tts-9": speech models are tts-1, tts-1-hd, gpt-4o-mini-tts, local/],
            [{ model: "tts-1", voice: "alloy", input: "" }, /input/],
            [{ model: "tts-1", voice: "alloy", input: "   " }, /input/],
            [{ model: "tts-1", voice: "alloy", input: "x".repeat(4_097) }, /input/],
            [{ model: "tts-1", voice: "alloy", input: "hi", response_format: "aac" }, /response_format/],
            [{ model: "tts-1", voice: "alloy", input: "hi", speed: 5 }, /speed/],
            [{ model: "tts-1", voice: "alloy", input: "hi", speed: 0.1 }, /speed/]
          ]
          for (const [body, message] of cases) {
            const refused = yield* sdkError(() => openai.audio.speech.create(body))
            expect(refused?.status).toBe(400)
            expect(refused?.error).toMatch(message)
          }
        }))

      it.effect("4,096 characters are spoken on a worker thread: the event loop is never held over 50 ms", () =>
        Effect.gen(function*() {
          const { openai } = yield* sdkClients("speech-long")
          const input = `${sentence} `.repeat(45).slice(0, 4_096)
          const { result, longestMs } = yield* longestTurn(speech(openai, { model: "tts-1", voice: "alloy", input, response_format: "wav" }))
          const format = yield* probe(result.bytes)
          expect(format.duration).toBeGreaterThan(120)
          expect(longestMs).toBeLessThan(50)
        }))
    }
  )
})

describe.each(backends)("speech through a provider on $name", ({ storage }) => {
  const serverWithProvider = Layer.unwrap(Effect.gen(function*() {
    const stub = yield* Effect.acquireRelease(Effect.promise(() => startStubSpeechProvider()), (s) => Effect.promise(s.close))
    return loopbackServer(storage, {
      audio: {
        baseUrl: Option.some(stub.url),
        apiKey: Option.some(Redacted.make(stub.key)),
        providerVoices: ["alloy", "narrator"],
        maxRetries: 0,
        creditsPer1000Chars: providerPrice
      }
    }).pipe(Layer.merge(Layer.succeed(Stub, stub)))
  }))

  it.layer(serverWithProvider, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("passes OpenAI's body to the provider and its audio back, billed at the provider's price", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const { tenant, openai } = yield* sdkClients("speech-provider")
        const before = yield* creditUsage(tenant)
        const { type, bytes } = yield* speech(openai, { model: "tts-1-hd", voice: "narrator", input: sentence, speed: 1.5 })
        expect(stub.requests.at(-1)).toEqual({ model: "tts-1-hd", voice: "narrator", input: sentence, response_format: "mp3", speed: 1.5 })
        expect(type).toBe("audio/mpeg")
        expect(Buffer.from(bytes).equals(Buffer.from(stub.audio))).toBe(true)
        expect((yield* creditUsage(tenant)) - before).toBe(Math.ceil((sentence.length * providerPrice) / 1000))
        const { voices } = yield* listVoices(openai)
        expect(voices.map((voice) => voice.id)).toEqual(["alloy", "narrator"])
        const refused = yield* sdkError(() => openai.audio.speech.create({ model: "tts-1", voice: "alloy", input: "[refuse] this" }))
        expect(refused).toEqual({ status: 400, error: "The speech provider: Input is not allowed" })
        const unknown = yield* sdkError(() => openai.audio.speech.create({ model: "tts-1", voice: "shimmer", input: "hi" }))
        expect(unknown).toMatchObject({ status: 400, error: expect.stringMatching(/Unknown voice "shimmer": voices are alloy, narrator/) })
        expect((yield* creditUsage(tenant)) - before).toBe(Math.ceil((sentence.length * providerPrice) / 1000))
      }))
  })
})
