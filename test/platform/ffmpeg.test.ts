import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Stream } from "effect"
import { bundledFfmpeg, Ffmpeg, FfmpegFailed } from "../../src/platform/Ffmpeg.ts"
import { probe } from "../support/Probe.ts"

/** `count` raw RGB frames of `width`×`height`, each a different grey. */
const frames = (width: number, height: number, count: number) =>
  Stream.fromIterable(Array.from({ length: count }, (_, index) => new Uint8Array(width * height * 3).fill((index * 20) % 256)))

const rawInput = (width: number, height: number, fps: number) =>
  ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", `${width}x${height}`, "-framerate", String(fps), "-i", "pipe:0"]

const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (error === undefined || error._tag !== "Fail") throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
    return error.error
  })

describe("Ffmpeg", () => {
  const ffmpeg = Ffmpeg.make(bundledFfmpeg())

  it.effect("encodes streamed frames to a GIF on standard output that ffprobe reads back", () =>
    Effect.gen(function*() {
      const bytes = yield* ffmpeg.run({
        args: [...rawInput(64, 48, 10), "-f", "gif", "pipe:1"],
        input: frames(64, 48, 12),
        timeoutMs: 20_000,
        maxOutputBytes: 1_000_000
      })
      expect(Buffer.from(bytes.subarray(0, 6)).toString("latin1")).toBe("GIF89a")
      const probed = yield* Effect.promise(() => probe(bytes))
      expect(probed).toMatchObject({ codec: "gif", width: 64, height: 48, frames: 12 })
    }))

  it.effect("writes an MP4 to a file when the container needs a seekable output", () =>
    Effect.gen(function*() {
      const bytes = yield* ffmpeg.run({
        args: [...rawInput(64, 48, 10), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart"],
        input: frames(64, 48, 20),
        outputExtension: "mp4",
        timeoutMs: 20_000,
        maxOutputBytes: 1_000_000
      })
      expect(Buffer.from(bytes.subarray(4, 8)).toString("latin1")).toBe("ftyp")
      const probed = yield* Effect.promise(() => probe(bytes))
      expect(probed).toMatchObject({ codec: "h264", width: 64, height: 48, frames: 20 })
      expect(probed.durationSeconds).toBeCloseTo(2, 1)
    }))

  it.effect("takes its input as bytes too", () =>
    Effect.gen(function*() {
      const frame = new Uint8Array(16 * 16 * 3).fill(200)
      const bytes = yield* ffmpeg.run({
        args: [...rawInput(16, 16, 1), "-f", "image2", "-c:v", "png", "pipe:1"],
        input: frame,
        timeoutMs: 20_000,
        maxOutputBytes: 100_000
      })
      expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47])
    }))

  it.live("kills a run past its time and says so (on the real clock)", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const error = yield* failureOf(ffmpeg.run({
        args: ["-re", "-f", "lavfi", "-i", "testsrc=size=32x32:rate=10", "-f", "null", "-"],
        timeoutMs: 500,
        maxOutputBytes: 1_000
      }))
      expect(error).toBeInstanceOf(FfmpegFailed)
      expect(error).toMatchObject({ reason: "timeout", message: "ffmpeg did not finish within 500 ms" })
      expect(Date.now() - started).toBeLessThan(5_000)
    }))

  it.effect("kills a run whose output passes the cap, on standard output and in a file", () =>
    Effect.gen(function*() {
      const endless = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "20"]
      const piped = yield* failureOf(ffmpeg.run({
        args: [...endless, "-f", "rawvideo", "pipe:1"],
        timeoutMs: 20_000,
        maxOutputBytes: 100_000
      }))
      expect(piped).toMatchObject({ reason: "output-too-large", message: "ffmpeg's output exceeded 100000 bytes" })
      const filed = yield* failureOf(ffmpeg.run({
        args: [...endless, "-c:v", "libx264", "-preset", "ultrafast"],
        outputExtension: "mp4",
        timeoutMs: 20_000,
        maxOutputBytes: 20_000
      }))
      expect(filed).toMatchObject({ reason: "output-too-large" })
    }))

  it.effect("names ffmpeg's own complaint when it refuses the input", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(ffmpeg.run({
        args: ["-f", "png_pipe", "-i", "pipe:0", "-f", "image2", "pipe:1"],
        input: new TextEncoder().encode("not an image"),
        timeoutMs: 20_000,
        maxOutputBytes: 1_000
      }))
      expect(error).toMatchObject({ reason: "failed" })
      expect((error as FfmpegFailed).message).toMatch(/^ffmpeg failed \(exit \d+\): .+/)
    }))

  it.effect("without a binary every run fails as unavailable, naming the setting", () =>
    Effect.gen(function*() {
      const missing = yield* failureOf(Ffmpeg.make(Option.none()).run({ args: [], timeoutMs: 1_000, maxOutputBytes: 1 }))
      expect(missing).toMatchObject({ reason: "unavailable" })
      expect((missing as FfmpegFailed).message).toContain("FFMPEG_PATH")
      const wrong = yield* failureOf(Ffmpeg.make(Option.some("/nonexistent/ffmpeg")).run({ args: [], timeoutMs: 1_000, maxOutputBytes: 1 }))
      expect(wrong).toMatchObject({ reason: "unavailable" })
      expect((wrong as FfmpegFailed).message).toContain("/nonexistent/ffmpeg")
    }))

  it.effect("the layer finds the bundled binary when FFMPEG_PATH is not set", () =>
    Effect.gen(function*() {
      const service = yield* Ffmpeg
      expect(Option.isSome(service.path)).toBe(true)
    }).pipe(Effect.provide(Ffmpeg.layer)))
})
