import { Context, Effect, Layer } from "effect"
import { makeWorkerPool, siblingModule, type WorkerFailed } from "../../platform/WorkerPool.ts"
import { AudioConfig } from "./AudioConfig.ts"
import type { EngineVoice, LocalVoiceJob, LocalVoiceReply } from "./LocalVoiceProtocol.ts"

/**
 * The offline `local` voice: eSpeak NG on worker threads (`SPEECH_WORKERS`,
 * each within `SPEECH_WORKER_MEMORY_MB` and `SPEECH_TIMEOUT_MS`), so that
 * synthesis never blocks the request thread. Its voices are eSpeak NG's
 * languages (`en-us`, `de`, `fr`, …) plus OpenAI's voice names, each an
 * English voice of its own pitch, so that clients written for OpenAI work
 * unchanged (docs/audio.md).
 */

/** OpenAI's voice names, played by eSpeak NG voices at different pitches. */
export const openAiVoiceNames: Record<string, { readonly voice: string; readonly pitch: number }> = {
  alloy: { voice: "en-us", pitch: 50 },
  ash: { voice: "en-us", pitch: 38 },
  ballad: { voice: "en-gb", pitch: 45 },
  coral: { voice: "en-us", pitch: 68 },
  echo: { voice: "en-us", pitch: 30 },
  fable: { voice: "en-gb", pitch: 55 },
  nova: { voice: "en-us", pitch: 75 },
  onyx: { voice: "en-us", pitch: 20 },
  sage: { voice: "en-gb-x-rp", pitch: 60 },
  shimmer: { voice: "en-us", pitch: 85 },
  verse: { voice: "en-029", pitch: 50 }
}

/** eSpeak NG's default pitch, for its own voices. */
const defaultPitch = 50

/** eSpeak NG's normal rate in words per minute, and the range it speaks at. */
const normalRate = 175
const slowestRate = 80
const fastestRate = 450

/** OpenAI's `speed` (0.25–4) as eSpeak NG's words per minute, within the range eSpeak NG speaks. */
export const rateOf = (speed: number) => Math.min(fastestRate, Math.max(slowestRate, Math.round(normalRate * speed)))

export type Synthesis =
  | { readonly kind: "speech"; readonly wav: Uint8Array; readonly seconds: number }
  | { readonly kind: "unknown-voice" }
  | { readonly kind: "too-long" }
  | { readonly kind: "failed"; readonly reason: string }

export class LocalVoice extends Context.Service<LocalVoice, {
  /** Every voice: OpenAI's names first, then eSpeak NG's languages. */
  readonly voices: Effect.Effect<ReadonlyArray<EngineVoice>>
  /** WAV (16-bit mono) of `text` in `voice` at OpenAI's `speed`. */
  readonly speak: (text: string, voice: string, speed: number) => Effect.Effect<Synthesis>
}>()("audio/LocalVoice") {
  static readonly layer = Layer.effect(LocalVoice, Effect.gen(function*() {
    const settings = yield* AudioConfig
    const run = yield* makeWorkerPool<LocalVoiceJob, LocalVoiceReply>({
      file: siblingModule(import.meta.url, "LocalVoiceWorker"),
      workers: settings.workers,
      memoryMb: settings.workerMemoryMb,
      timeoutMs: settings.timeoutMs
    })
    const reasons: Record<WorkerFailed["reason"], string> = {
      timeout: `The local voice did not finish within ${settings.timeoutMs} ms (SPEECH_TIMEOUT_MS)`,
      "out-of-memory": `The local voice needed more than ${settings.workerMemoryMb} MB (SPEECH_WORKER_MEMORY_MB)`,
      crashed: "The local voice failed"
    }
    // The engine's voices never change: asked of the first thread once, kept (a failure is not kept).
    let known: ReadonlyArray<EngineVoice> | undefined
    const engineVoices = Effect.suspend(() =>
      known !== undefined ? Effect.succeed(known) : Effect.flatMap(run({ kind: "voices" }), (reply) => {
        if (reply.kind !== "voices") return Effect.die(new Error(`The local voice answered ${reply.kind} to a voice listing`))
        known = reply.voices
        return Effect.succeed(known)
      }))
    const aliases: ReadonlyArray<EngineVoice> = Object.entries(openAiVoiceNames).map(([id, { voice }]) => ({
      id,
      name: `${id[0]!.toUpperCase()}${id.slice(1)}`,
      language: voice
    }))
    return {
      voices: engineVoices.pipe(
        Effect.map((voices) => [...aliases, ...voices]),
        // Without its engine there is no voice to list: a defect of the installation, answered 500 and logged.
        Effect.catchTag("WorkerFailed", (failed) => Effect.die(new Error(reasons[failed.reason])))
      ),
      speak: (text, voice, speed) => {
        const alias = openAiVoiceNames[voice]
        return run({
          kind: "speak",
          text,
          voice: alias?.voice ?? voice,
          pitch: alias?.pitch ?? defaultPitch,
          rate: rateOf(speed),
          maxBytes: settings.maxBytes
        }).pipe(
          Effect.map((reply): Synthesis =>
            reply.kind === "voices" ? { kind: "failed", reason: reasons.crashed } : reply),
          Effect.catchTag("WorkerFailed", (failed) => Effect.succeed<Synthesis>({ kind: "failed", reason: reasons[failed.reason] }))
        )
      }
    }
  }))
}
