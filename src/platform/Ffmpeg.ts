import { Config, Context, Data, Duration, Effect, Layer, Option, Stream } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * ffmpeg as a service: encodes video frames, converts audio. The binary is
 * `FFMPEG_PATH` when set, else the one `@ffmpeg-installer/ffmpeg` ships for
 * this platform, so a fresh `npm ci` can encode without a system package.
 * Every run is bounded in time and output bytes and killed past either; a
 * run interrupted (the client left) is killed too.
 */

/**
 * Why a run gave no output: no ffmpeg to run (`unavailable`), past its time
 * (`timeout`), past its output cap (`output-too-large`), ffmpeg refused the
 * input or arguments (`failed`, with the end of its log), or the input could
 * not be written to it (`input`).
 */
export class FfmpegFailed extends Data.TaggedError("FfmpegFailed")<{
  readonly reason: "unavailable" | "timeout" | "output-too-large" | "failed" | "input"
  readonly message: string
}> {}

export interface FfmpegJob<E, R> {
  /**
   * ffmpeg's arguments. Read the input from `pipe:0`; write the output to
   * `pipe:1`, unless `outputExtension` is given: then the service appends a
   * temporary file of that extension as the last argument (for containers
   * that need a seekable output, as MP4 with its index at the front).
   */
  readonly args: ReadonlyArray<string>
  /** Written to ffmpeg's standard input, then closed; none: standard input is closed at once. */
  readonly input?: Uint8Array | Stream.Stream<Uint8Array, E, R> | undefined
  readonly outputExtension?: string | undefined
  readonly timeoutMs: number
  readonly maxOutputBytes: number
}

export interface FfmpegService {
  /** The binary's path; none when neither `FFMPEG_PATH` nor the bundled package gives one. */
  readonly path: Option.Option<string>
  /** Runs ffmpeg and answers what it wrote (standard output, or the output file). */
  readonly run: <E = never, R = never>(job: FfmpegJob<E, R>) => Effect.Effect<Uint8Array, FfmpegFailed | E, R>
}

/** The binary `@ffmpeg-installer/ffmpeg` ships for this platform, if it is installed. */
export const bundledFfmpeg = (): Option.Option<string> => {
  try {
    const installed = createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { readonly path?: unknown }
    return typeof installed.path === "string" ? Option.some(installed.path) : Option.none()
  } catch {
    return Option.none()
  }
}

/** The end of ffmpeg's log: its error is on the last lines. */
const logTailChars = 600

const tail = (log: string) => log.trim().split("\n").slice(-4).join(" / ").slice(-logTailChars)

interface Outcome {
  readonly code: number | null
  readonly overflowed: boolean
  readonly stdout: ReadonlyArray<Buffer>
  readonly log: string
}

/** Follows the process to its end, keeping its output (killing it past `maxBytes` when it goes to stdout). */
const outcomeOf = (child: ChildProcessWithoutNullStreams, maxBytes: number, collect: boolean) =>
  new Promise<Outcome>((resolve) => {
    const stdout: Array<Buffer> = []
    let size = 0
    let overflowed = false
    let log = ""
    child.stdout.on("data", (chunk: Buffer) => {
      if (!collect || overflowed) return
      size += chunk.length
      if (size > maxBytes) {
        overflowed = true
        stdout.length = 0
        child.kill("SIGKILL")
      } else stdout.push(chunk)
    })
    child.stderr.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString("utf8")).slice(-4 * logTailChars)
    })
    child.on("close", (code) => resolve({ code, overflowed, stdout, log }))
  })

/** Writes a chunk, waiting while the pipe is full; a pipe that closed (ffmpeg ended) stops waiting. */
const write = (child: ChildProcessWithoutNullStreams, chunk: Uint8Array) =>
  Effect.callback<void>((resume) => {
    if (child.stdin.destroyed || child.stdin.write(chunk)) return resume(Effect.void)
    const done = () => {
      child.stdin.off("drain", done)
      child.stdin.off("close", done)
      resume(Effect.void)
    }
    child.stdin.on("drain", done)
    child.stdin.on("close", done)
  })

const feed = <E, R>(child: ChildProcessWithoutNullStreams, input: FfmpegJob<E, R>["input"]) => {
  // A write after ffmpeg exited fails with EPIPE: its exit status tells what happened.
  child.stdin.on("error", () => undefined)
  const close = Effect.sync(() => child.stdin.end())
  if (input === undefined) return close
  if (input instanceof Uint8Array) return Effect.andThen(write(child, input), close)
  return Effect.andThen(Stream.runForEach(input, (chunk) => write(child, chunk)), close)
}

const runWith = (path: Option.Option<string>) =>
<E = never, R = never>(job: FfmpegJob<E, R>): Effect.Effect<Uint8Array, FfmpegFailed | E, R> => {
  if (Option.isNone(path)) {
    return Effect.fail(new FfmpegFailed({
      reason: "unavailable",
      message: "ffmpeg is not available: install the @ffmpeg-installer/ffmpeg package or set FFMPEG_PATH"
    }))
  }
  const binary = path.value
  return Effect.gen(function*() {
    const outputFile = job.outputExtension === undefined ? undefined : yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "ffmpeg-"))),
      (folder) => Effect.promise(() => rm(folder, { recursive: true, force: true }))
    ).pipe(Effect.map((folder) => join(folder, `output.${job.outputExtension}`)))
    const args = ["-hide_banner", "-nostdin", "-loglevel", "error", ...job.args]
    if (outputFile !== undefined) args.push("-fs", String(job.maxOutputBytes + 1), "-y", outputFile)
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] })),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const spawned = yield* Effect.promise(() =>
      new Promise<Error | undefined>((resolve) => {
        child.once("spawn", () => resolve(undefined))
        child.once("error", resolve)
      })
    )
    if (spawned !== undefined) {
      return yield* new FfmpegFailed({ reason: "unavailable", message: `ffmpeg could not be started (${binary}): ${spawned.message}` })
    }
    const outcome = outcomeOf(child, job.maxOutputBytes, outputFile === undefined)
    yield* feed(child, job.input)
    const { code, overflowed, stdout, log } = yield* Effect.promise(() => outcome)
    const tooLarge = new FfmpegFailed({
      reason: "output-too-large",
      message: `ffmpeg's output exceeded ${job.maxOutputBytes} bytes`
    })
    if (overflowed) return yield* tooLarge
    if (code !== 0) {
      return yield* new FfmpegFailed({ reason: "failed", message: `ffmpeg failed (exit ${code ?? "killed"}): ${tail(log)}` })
    }
    if (outputFile === undefined) return new Uint8Array(Buffer.concat(stdout))
    const written = yield* Effect.promise(() => stat(outputFile))
    if (written.size > job.maxOutputBytes) return yield* tooLarge
    return new Uint8Array(yield* Effect.promise(() => readFile(outputFile)))
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({
      duration: Duration.millis(job.timeoutMs),
      orElse: () => Effect.fail(new FfmpegFailed({ reason: "timeout", message: `ffmpeg did not finish within ${job.timeoutMs} ms` }))
    })
  )
}

export class Ffmpeg extends Context.Service<Ffmpeg, FfmpegService>()("platform/Ffmpeg") {
  /** The binary at `path`, or none (every run then fails as `unavailable`). */
  static readonly make = (path: Option.Option<string>): FfmpegService => ({ path, run: runWith(path) })

  /** `FFMPEG_PATH`, else the bundled binary. */
  static readonly layer = Layer.effect(
    Ffmpeg,
    Effect.map(
      Effect.orDie(Config.option(Config.NonEmptyString("FFMPEG_PATH"))),
      (configured) => Ffmpeg.make(Option.orElse(configured, bundledFfmpeg))
    )
  )
}
