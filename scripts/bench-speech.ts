// `npm run bench:speech`: characters per second of the offline local voice.
// The same texts (a 1,000- and a 4,096-character English passage, the
// speech endpoint's cap) are spoken `ROUNDS` (3) times each:
// 1. directly by eSpeak NG on this thread, with nothing around it (the baseline);
// 2. by the platform's `LocalVoice` (a worker thread of the pool, WAV encoded
//    there, the reply copied back), as `POST /audio/speech` with
//    `response_format: "wav"` does;
// 3. the same plus the MP3 encoding by ffmpeg (the endpoint's default format).
// Reports characters per second (median and range), audio seconds spoken per
// second of wall time, and the first call's time (the thread loading eSpeak NG).
import load from "@echogarden/espeak-ng-emscripten"
import { Console, Effect, Layer } from "effect"
import { AudioConfig } from "../src/media/audio/AudioConfig.ts"
import { LocalVoice } from "../src/media/audio/LocalVoice.ts"
import { Ffmpeg } from "../src/platform/Ffmpeg.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { spread } from "./bench/stats.ts"

const rounds = numberFromEnv("ROUNDS", 3)
const startedAt = new Date()

const passage =
  "The platform speaks any text it is given with an offline voice, so that a fresh machine answers without a provider. " +
  "Numbers such as 1,024 and dates like March 3rd, 2026 are read the way a person would say them. "
const textOf = (length: number) => passage.repeat(Math.ceil(length / passage.length)).slice(0, length)
const lengths = [1_000, 4_096]

interface Sample {
  readonly ms: number
  readonly audioSeconds: number
}

const time = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* effect
    return { result, ms: performance.now() - started }
  })

const program = Effect.gen(function*() {
  const local = yield* LocalVoice
  const ffmpeg = yield* Ffmpeg
  const settings = yield* AudioConfig

  // The baseline: eSpeak NG on this thread, nothing around it.
  const loadStarted = performance.now()
  const engine = yield* Effect.promise(() => load().then((module) => new module.eSpeakNGWorker()))
  const directLoadMs = performance.now() - loadStarted
  const direct = (text: string): Sample => {
    const started = performance.now()
    engine.set_voice("en-us")
    engine.set_rate(175)
    let samples = 0
    engine.synthesize(text, (chunk) => {
      samples += chunk.length
      return false
    })
    return { ms: performance.now() - started, audioSeconds: samples / engine.get_samplerate() }
  }

  const speakWav = (text: string) =>
    Effect.flatMap(local.speak(text, "alloy", 1), (synthesis) =>
      synthesis.kind === "speech" ? Effect.succeed(synthesis) : Effect.die(new Error(`The local voice answered ${synthesis.kind}`)))
  const first = yield* time(speakWav("Hello."))

  const rows: Array<Record<string, unknown>> = []
  for (const length of lengths) {
    const text = textOf(length)
    const measured: Record<string, Array<Sample>> = { direct: [], "LocalVoice (wav)": [], "LocalVoice + mp3": [] }
    for (let round = 0; round < rounds; round++) {
      measured.direct!.push(direct(text))
      const wav = yield* time(speakWav(text))
      measured["LocalVoice (wav)"]!.push({ ms: wav.ms, audioSeconds: wav.result.seconds })
      const mp3 = yield* time(Effect.flatMap(speakWav(text), (synthesis) =>
        ffmpeg.run({
          args: ["-f", "wav", "-i", "pipe:0", "-codec:a", "libmp3lame", "-b:a", "64k", "-f", "mp3", "pipe:1"],
          input: synthesis.wav,
          timeoutMs: settings.timeoutMs,
          maxOutputBytes: settings.maxBytes
        }).pipe(Effect.map(() => synthesis))))
      measured["LocalVoice + mp3"]!.push({ ms: mp3.ms, audioSeconds: mp3.result.seconds })
    }
    for (const [path, samples] of Object.entries(measured)) {
      rows.push({
        characters: length,
        path,
        charactersPerSecond: spread(samples.map((sample) => (length / sample.ms) * 1_000)),
        realTimeFactor: spread(samples.map((sample) => sample.audioSeconds / (sample.ms / 1_000))),
        audioSeconds: samples[0]!.audioSeconds
      })
    }
  }

  const range = (value: unknown, digits = 0) => {
    const { median, min, max } = value as { median: number; min: number; max: number }
    return digits === 0 ? `${integer(median)} (${integer(min)}–${integer(max)})` : `${fixed(median, digits)} (${fixed(min, digits)}–${fixed(max, digits)})`
  }
  yield* Console.log(formatTable(
    ["characters", "path", "characters/s, median (range)", "audio s per s", "audio s"],
    rows.map((row) => [String(row.characters), String(row.path), range(row.charactersPerSecond), range(row.realTimeFactor, 1), fixed(row.audioSeconds as number)])
  ))
  yield* Console.log(
    `\neSpeak NG loaded on this thread in ${integer(directLoadMs)} ms; the pool's first call (a new thread loading it) took ${integer(first.ms)} ms.`
  )
  yield* Console.log(`Results: ${writeResults("speech", startedAt, { rounds, directLoadMs, firstCallMs: first.ms, rows })}`)
})

await Effect.runPromise(program.pipe(
  Effect.provide(LocalVoice.layer.pipe(Layer.provideMerge(AudioConfig.layerWith({ workers: 1 })), Layer.merge(Ffmpeg.layer))),
  Effect.scoped
))
