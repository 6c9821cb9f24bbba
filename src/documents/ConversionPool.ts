import { Context, Duration, Effect, Exit, Layer, Semaphore } from "effect"
import { Worker } from "node:worker_threads"
import { AppConfig } from "../platform/AppConfig.ts"
import type { ConversionJob, ConversionReply } from "./Protocol.ts"

/**
 * A small pool of conversion worker threads (`DOCUMENT_WORKERS`), so that
 * parsing never blocks the request thread. Each job runs on one thread with
 * a heap limit; a job that overruns `DOCUMENT_TIMEOUT_MS`, runs out of memory,
 * crashes its thread or is abandoned (the client left) gets its thread
 * terminated and replaced. Healthy threads are kept warm for the next job.
 */
export class ConversionPool extends Context.Service<ConversionPool, {
  readonly convert: (job: ConversionJob) => Effect.Effect<ConversionReply>
}>()("documents/ConversionPool") {
  static readonly layer = Layer.effect(ConversionPool, Effect.gen(function*() {
    const settings = (yield* AppConfig).documents
    const permits = yield* Semaphore.make(settings.workers)
    const idle: Array<Worker> = []
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(idle.splice(0).map((worker) => worker.terminate()))))

    const spawn = () => {
      const worker = new Worker(workerFile, {
        // A roomy young generation: the parsers allocate many short-lived objects, and scavenges dominate otherwise.
        resourceLimits: { maxOldGenerationSizeMb: settings.workerMemoryMb, maxYoungGenerationSizeMb: 128 }
      })
      worker.unref()
      return worker
    }

    /** One job on one thread; `healthy` false when the thread must not take another. */
    const runOn = (worker: Worker, job: ConversionJob) =>
      Effect.callback<{ readonly reply: ConversionReply; readonly healthy: boolean }>((resume) => {
        const settle = (reply: ConversionReply, healthy: boolean) => {
          worker.off("message", onMessage).off("error", onError).off("exit", onExit)
          resume(Effect.succeed({ reply, healthy }))
        }
        const onMessage = (reply: ConversionReply) => settle(reply, true)
        const onError = (error: Error & { readonly code?: string }) =>
          settle({
            ok: false,
            reason: error.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? `needs more than ${settings.workerMemoryMb} MB of memory to convert`
              : "could not be converted (the converter failed)"
          }, false)
        const onExit = () => settle({ ok: false, reason: "could not be converted (the converter stopped)" }, false)
        worker.on("message", onMessage).on("error", onError).on("exit", onExit)
        worker.postMessage(job)
        return Effect.sync(() => worker.off("message", onMessage).off("error", onError).off("exit", onExit))
      })

    const timedOut = {
      reply: { ok: false as const, reason: `could not be converted within ${settings.timeoutMs / 1000} s` },
      healthy: false
    }

    return {
      convert: (job) =>
        permits.withPermits(1)(
          Effect.acquireUseRelease(
            Effect.sync(() => idle.pop() ?? spawn()),
            (worker) =>
              runOn(worker, job).pipe(
                Effect.timeoutOrElse({ duration: Duration.millis(settings.timeoutMs), orElse: () => Effect.succeed(timedOut) })
              ),
            (worker, exit) =>
              Effect.sync(() => {
                if (Exit.isSuccess(exit) && exit.value.healthy) idle.push(worker)
                else void worker.terminate()
              })
          )
        ).pipe(Effect.map(({ reply }) => reply))
    }
  }))
}

/** The worker's module beside this one: `.ts` when run from source, `.js` when built. */
const workerFile = new URL(
  import.meta.url.endsWith(".ts") ? "./ConversionWorker.ts" : "./ConversionWorker.js",
  import.meta.url
)
