import { Effect } from "effect"
import { threadId } from "node:worker_threads"
import { answerJobs } from "../../src/platform/WorkerPool.ts"

/** What the worker-pool tests ask their worker thread (test/foundation/worker-pool.test.ts). */
export type PoolTestJob =
  | { readonly kind: "threadId" }
  | { readonly kind: "spin" }
  | { readonly kind: "allocate" }
  | { readonly kind: "exit" }
  | { readonly kind: "die" }
  | { readonly kind: "uncloneable" }

const handle = (job: PoolTestJob): Effect.Effect<unknown> => {
  switch (job.kind) {
    case "threadId":
      return Effect.succeed(threadId)
    case "spin":
      return Effect.sync(() => {
        for (;;);
      })
    case "allocate":
      return Effect.sync(() => {
        const held: Array<Array<number>> = []
        for (;;) held.push(Array.from({ length: 100_000 }, (_, index) => index))
      })
    case "exit":
      return Effect.sync(() => process.exit(3))
    case "die":
      return Effect.die(new Error("the job broke"))
    case "uncloneable":
      return Effect.succeed(() => "a function cannot cross threads")
  }
}

answerJobs(handle)
