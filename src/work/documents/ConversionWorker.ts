import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { tokenCounter } from "../../models/llm/Tokenizer.ts"
import { answerJobs } from "../../platform/WorkerPool.ts"
import { convert } from "./Converters.ts"
import type { ConversionJob, ConversionReply } from "./Protocol.ts"
import { Unconvertible } from "./Unconvertible.ts"

/**
 * The body of a conversion worker thread (see `ConversionPool`): parsing and
 * token counting run here, never on the request thread, within the
 * thread's memory limit; the pool terminates a thread that overruns its time.
 */

const handle = (job: ConversionJob): Effect.Effect<ConversionReply> =>
  Effect.gen(function*() {
    const bytes = yield* Effect.tryPromise({
      try: () => readFile(job.path),
      catch: () => new Unconvertible({ reason: "could not be read" })
    })
    const converted = yield* convert(bytes, job.hints, job.limits)
    const counter = yield* tokenCounter
    return { ok: true as const, ...converted, tokens: yield* counter.text(converted.content) }
  }).pipe(
    Effect.catchTag("Unconvertible", (failure) => Effect.succeed({ ok: false as const, reason: failure.reason })),
    // A parser that broke in an unexpected way: the file is what it could not read.
    Effect.catchCause(() => Effect.succeed({ ok: false as const, reason: "could not be converted (corrupt or unsupported)" }))
  )

answerJobs(handle)
