import { Context, Effect, Layer } from "effect"
import { ContentRefused } from "./Errors.ts"
import { ContentConfig } from "./ContentConfig.ts"
import { makeWorkerPool, siblingModule } from "../../platform/WorkerPool.ts"
import type { ContentJob, ContentJobs, ContentTool } from "./ContentJobs.ts"

/** A content job's time limit once a thread has it: 500 KB takes well under a second. */
const contentJobTimeoutMs = 10_000
/** Each content worker thread's heap limit. */
const contentWorkerMemoryMb = 256

/**
 * The content worker threads (`CONTENT_WORKERS`): the content tools' analysis
 * and rewriting run there, so that a large e-mail never holds the request
 * thread. A job that overruns its time or memory is a 400 naming `content`.
 */
export class ContentPool extends Context.Service<ContentPool, {
  readonly run: <Tool extends ContentTool>(
    tool: Tool,
    input: Parameters<ContentJobs[Tool]>[0]
  ) => Effect.Effect<ReturnType<ContentJobs[Tool]>, ContentRefused>
}>()("content/ContentPool") {
  static readonly layer = Layer.effect(ContentPool, Effect.gen(function*() {
    const { workers } = yield* ContentConfig
    const run = yield* makeWorkerPool<ContentJob, unknown>({
      file: siblingModule(import.meta.url, "ContentWorker"),
      workers,
      memoryMb: contentWorkerMemoryMb,
      timeoutMs: contentJobTimeoutMs
    })
    return {
      run: <Tool extends ContentTool>(tool: Tool, input: Parameters<ContentJobs[Tool]>[0]) =>
        run({ tool, input } as ContentJob).pipe(
          Effect.map((reply) => reply as ReturnType<ContentJobs[Tool]>),
          Effect.catchTag("WorkerFailed", (failed) => {
            switch (failed.reason) {
              case "timeout":
                return Effect.fail(new ContentRefused({ message: `content: could not be processed within ${contentJobTimeoutMs / 1000} s` }))
              case "out-of-memory":
                return Effect.fail(new ContentRefused({ message: `content: needs more than ${contentWorkerMemoryMb} MB of memory to process` }))
              case "crashed":
                return Effect.die(failed)
            }
          })
        )
    }
  }))
}
