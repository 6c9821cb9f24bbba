import { Cause, Context, Effect, Layer } from "effect"
import type { EmployeesRepo } from "../agents/EmployeesRepo.ts"
import type { DepartmentsRepo } from "../departments/DepartmentsRepo.ts"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import { pollForever, whileLeased } from "../../platform/LeasedWork.ts"
import { currentDate } from "../../platform/Time.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import type { EmbeddingsModel } from "../documents/EmbeddingsModel.ts"
import type { KnowledgeConfig } from "../documents/KnowledgeConfig.ts"
import { KnowledgeSettingsLive } from "../documents/Http.ts"
import { SqlClient } from "effect/sql"
import { SchedulerConfig } from "./SchedulerConfig.ts"
import type { TaskToolServices } from "./TaskAgent.ts"
import { handleClaim } from "./TaskRunner.ts"
import type { Claim } from "./TaskRecords.ts"
import { TasksRepo } from "./TasksRepo.ts"

/**
 * The scheduled-task worker. Each poll claims due tasks with a lease (so
 * that processes sharing one database never take the same occurrence) and
 * handles them concurrently; while a task runs, its lease is renewed every
 * third of its duration, and a run whose lease was taken over is abandoned.
 */
export class Scheduler extends Context.Service<Scheduler, {
  /** One poll: claims up to `concurrency` due tasks, handles them, and answers how many it claimed. */
  readonly runDue: Effect.Effect<number>
}>()("tasks/Scheduler") {
  static readonly layer = Layer.effect(Scheduler, Effect.gen(function*() {
    const config = yield* SchedulerConfig
    const repo = yield* TasksRepo
    const context = yield* Effect.context<
      TasksRepo | EmployeesRepo | DepartmentsRepo | Credits | Llm | ModelCatalog | SchedulerConfig | TaskToolServices | SqlClient.SqlClient
    >()
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    const renew = (claim: Claim) =>
      Effect.flatMap(currentDate, (now) => repo.renewLease(claim.task.id, claim.token, leaseUntil(now)))

    const handle = (claim: Claim) =>
      handleClaim(claim).pipe(
        whileLeased(claim.task.id, config.leaseMs, renew(claim)),
        Effect.tap((recorded) =>
          recorded ? Effect.void : Effect.logWarning("Scheduled task lease lost before recording", { taskId: claim.task.id })
        ),
        Effect.catchTag("LeaseLost", (lost) => Effect.logWarning("Scheduled task lease lost during the run", lost)),
        // A failure of storage leaves the lease to expire: the occurrence is retried, never lost.
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("Scheduled task run failed", { taskId: claim.task.id, cause })
        ),
        Effect.provideContext(context)
      )

    return {
      runDue: Effect.gen(function*() {
        const now = yield* currentDate
        const claims = yield* repo.claimDue(now, leaseUntil(now), config.concurrency)
        yield* Effect.forEach(claims, handle, { concurrency: "unbounded", discard: true })
        return claims.length
      })
    }
    // search_knowledge in a task searches with the knowledge base's embeddings model.
  })).pipe(Layer.provide(KnowledgeSettingsLive))

  /**
   * The background worker of a server process: polls every
   * `SCHEDULER_POLL_MS`, and again at once while a poll found a full batch.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* SchedulerConfig
    if (!config.enabled) return
    const scheduler = yield* Scheduler
    yield* pollForever({ name: "Scheduler", poll: scheduler.runDue, batch: config.concurrency, pollMs: config.pollMs })
    yield* Effect.logInfo("Scheduler started", { pollMs: config.pollMs, concurrency: config.concurrency })
  }))
}

/** The worker with its configuration from the environment; needs storage, `Credits`, an `Llm` and what the tasks' tools use. */
export const SchedulerLive: Layer.Layer<
  never,
  never,
  TasksRepo | EmployeesRepo | DepartmentsRepo | Credits | Llm | ModelCatalog | SqlClient.SqlClient | Exclude<TaskToolServices, EmbeddingsModel | KnowledgeConfig>
> = Scheduler.worker.pipe(
  Layer.provide(Scheduler.layer),
  Layer.provide(SchedulerConfig.layer)
)
