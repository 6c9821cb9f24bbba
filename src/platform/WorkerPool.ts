import { Data, Duration, Effect, Exit, Fiber, Semaphore } from "effect"
import { parentPort, Worker } from "node:worker_threads"

/** Why a worker thread gave no reply to a job; the thread is then terminated and replaced. */
export class WorkerFailed extends Data.TaggedError("WorkerFailed")<{
  readonly reason: "timeout" | "out-of-memory" | "crashed"
}> {}

/** A worker's module beside the calling module (`import.meta.url`): `.ts` when run from source, `.js` when built. */
export const siblingModule = (callerUrl: string, name: string) => new URL(`./${name}${callerUrl.endsWith(".ts") ? ".ts" : ".js"}`, callerUrl)

export interface WorkerPoolSettings {
  /** The worker's module (`siblingModule`); it answers with `answerJobs`. */
  readonly file: URL
  /** Threads at most, one job each at a time; further jobs wait their turn. */
  readonly workers: number
  /** Each thread's heap limit. */
  readonly memoryMb: number
  /** A job's time limit once a thread has it. */
  readonly timeoutMs: number
  /** A larger young generation for workers whose parsers allocate many short-lived objects; V8's default otherwise. */
  readonly youngGenerationMb?: number
}

/** A thread idle this long is terminated, so that a burst of work does not keep its memory for good. */
export const idleThreadMs = 30_000

/** A worker's message: the job's reply, or that the job failed or its reply could not be sent. */
type Answer<Reply> = { readonly ok: true; readonly reply: Reply } | { readonly ok: false }

/**
 * A small pool of worker threads, so that CPU-heavy work never blocks the
 * request thread. Threads start on demand and stay warm for the next job
 * until idle for `idleThreadMs`; one that overruns its time, runs out of
 * memory, crashes or is abandoned (the caller was interrupted, e.g. the
 * client left) is terminated and replaced. Closing the pool's scope
 * terminates the idle threads.
 */
export const makeWorkerPool = <Job, Reply>(settings: WorkerPoolSettings) =>
  Effect.gen(function*() {
    const permits = yield* Semaphore.make(settings.workers)
    const scope = yield* Effect.scope
    const idle: Array<{ readonly worker: Worker; readonly retirement: Fiber.Fiber<void> }> = []
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(idle.splice(0).map(({ worker }) => worker.terminate()))))

    const spawn = () => {
      const worker = new Worker(settings.file, {
        resourceLimits: { maxOldGenerationSizeMb: settings.memoryMb, maxYoungGenerationSizeMb: settings.youngGenerationMb }
      })
      worker.unref()
      return worker
    }

    const take = Effect.suspend(() => {
      const warm = idle.pop()
      return warm === undefined ? Effect.sync(spawn) : Effect.as(Fiber.interrupt(warm.retirement), warm.worker)
    })

    const retire = (worker: Worker) =>
      Effect.sync(() => {
        const at = idle.findIndex((entry) => entry.worker === worker)
        if (at < 0) return
        idle.splice(at, 1)
        void worker.terminate()
      })

    const putBack = (worker: Worker) =>
      Effect.sleep(Duration.millis(idleThreadMs)).pipe(
        Effect.andThen(retire(worker)),
        Effect.forkIn(scope),
        Effect.map((retirement) => void idle.push({ worker, retirement }))
      )

    /** One job on one thread; the thread takes another job only after a reply. */
    const runOn = (worker: Worker, job: Job) =>
      Effect.callback<Reply, WorkerFailed>((resume) => {
        const detach = () => worker.off("message", onMessage).off("error", onError).off("exit", onExit)
        const settle = (result: Effect.Effect<Reply, WorkerFailed>) => {
          detach()
          resume(result)
        }
        const onMessage = (answer: Answer<Reply>) =>
          settle(answer.ok ? Effect.succeed(answer.reply) : Effect.fail(new WorkerFailed({ reason: "crashed" })))
        const onError = (error: Error & { readonly code?: string }) =>
          settle(Effect.fail(new WorkerFailed({ reason: error.code === "ERR_WORKER_OUT_OF_MEMORY" ? "out-of-memory" : "crashed" })))
        const onExit = () => settle(Effect.fail(new WorkerFailed({ reason: "crashed" })))
        worker.on("message", onMessage).on("error", onError).on("exit", onExit)
        worker.postMessage(job)
        return Effect.sync(detach)
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(settings.timeoutMs),
          orElse: () => Effect.fail(new WorkerFailed({ reason: "timeout" }))
        })
      )

    return (job: Job): Effect.Effect<Reply, WorkerFailed> =>
      permits.withPermits(1)(
        Effect.acquireUseRelease(
          take,
          (worker) => runOn(worker, job),
          (worker, exit) => Exit.isSuccess(exit) ? putBack(worker) : Effect.sync(() => void worker.terminate())
        )
      )
  })

/**
 * The body of a pool's worker thread: answers each job with `handle`'s reply.
 * A job that fails, or whose reply cannot be sent (not cloneable), still gets
 * an answer, so the pool never waits for its time limit.
 */
export const answerJobs = <Job, Reply>(handle: (job: Job) => Effect.Effect<Reply>) => {
  const post = (answer: Answer<Reply>) => {
    try {
      parentPort?.postMessage(answer)
    } catch {
      parentPort?.postMessage({ ok: false } satisfies Answer<Reply>)
    }
  }
  parentPort?.on("message", (job: Job) => {
    void Effect.runPromiseExit(handle(job)).then((exit) => post(Exit.isSuccess(exit) ? { ok: true, reply: exit.value } : { ok: false }))
  })
}
