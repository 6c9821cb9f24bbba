import load, { type ESpeakWorker } from "@echogarden/espeak-ng-emscripten"
import { Effect } from "effect"
import wavefile from "wavefile"
import { answerJobs } from "../../platform/WorkerPool.ts"
import type { EngineVoice, LocalVoiceJob, LocalVoiceReply } from "./LocalVoiceProtocol.ts"

/**
 * The body of a local-voice worker thread (see `LocalVoice`): eSpeak NG,
 * compiled to JavaScript, loaded once per thread (about a second) and kept
 * for the thread's next jobs; synthesis and WAV encoding run here, never on
 * the request thread.
 */

let engine: Promise<ESpeakWorker> | undefined

const loaded = () => (engine ??= load().then((module) => new module.eSpeakNGWorker()))

const voicesOf = (worker: ESpeakWorker): ReadonlyArray<EngineVoice> => {
  const seen = new Set<string>()
  const voices: Array<EngineVoice> = []
  for (const voice of worker.list_voices()) {
    const language = voice.languages[0]?.name
    if (language === undefined || seen.has(language)) continue
    seen.add(language)
    voices.push({ id: language, name: voice.name, language })
  }
  return voices
}

const speak = (worker: ESpeakWorker, job: Extract<LocalVoiceJob, { kind: "speak" }>): LocalVoiceReply => {
  if (!voicesOf(worker).some((voice) => voice.id === job.voice) || worker.set_voice(job.voice) !== 0) {
    return { kind: "unknown-voice" }
  }
  worker.set_rate(job.rate)
  worker.set_pitch(job.pitch)
  const chunks: Array<Int16Array> = []
  let samples = 0
  let tooLong = false
  const maxSamples = Math.floor(job.maxBytes / 2)
  worker.synthesize(job.text, (chunk) => {
    samples += chunk.length
    if (samples > maxSamples) {
      tooLong = true
      return true
    }
    chunks.push(chunk)
    return false
  })
  if (tooLong) return { kind: "too-long" }
  const pcm = new Int16Array(samples)
  let offset = 0
  for (const chunk of chunks) {
    pcm.set(chunk, offset)
    offset += chunk.length
  }
  const sampleRate = worker.get_samplerate()
  const wav = new wavefile.WaveFile()
  wav.fromScratch(1, sampleRate, "16", pcm)
  return { kind: "speech", wav: wav.toBuffer(), seconds: samples / sampleRate }
}

const handle = (job: LocalVoiceJob): Effect.Effect<LocalVoiceReply> =>
  Effect.map(Effect.promise(loaded), (worker) =>
    job.kind === "voices" ? { kind: "voices", voices: voicesOf(worker) } : speak(worker, job))

answerJobs(handle)
