import { Cause, Context, Duration, Effect, Layer, Option, Ref, Result } from "effect"
import { CampaignsConfig } from "../campaigns/CampaignsConfig.ts"
import { retryAt } from "../campaigns/CampaignWorker.ts"
import { parseTemplates, renderMessage } from "../campaigns/Message.ts"
import { trackingUrls } from "../campaigns/Tracking.ts"
import { TrackingSecret } from "../campaigns/TrackingSecret.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import type { Llm, ModelCatalog } from "../llm/Llm.ts"
import { Mailer } from "../mail/Mailer.ts"
import { addressOf, listUnsubscribeHeaders, type SendOutcome } from "../mail/Message.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { currentDate } from "../platform/Time.ts"
import type { Credits } from "../usage/Credits.ts"
import { draft } from "./Drafting.ts"
import { executionFor } from "./Sequences.ts"
import { SequencesConfig } from "./SequencesConfig.ts"
import { type ExecutionClaim, type ExecutionRecord, type SendResult, SequencesRepo } from "./SequencesRepo.ts"

/**
 * The sequence worker of a server process, two loops over one database,
 * leased as the task scheduler is:
 *
 * - the drafter claims unwritten drafts and has the model write each; a
 *   draft is stored only while the claim's lease is its own, so each
 *   execution gets exactly one draft whatever the number of workers;
 * - the sender claims approved executions that are due, marks each as
 *   started (under the lease) before handing it to the `Mailer`, and records
 *   the outcome with the contact's next execution. A send whose worker died
 *   after the mark is never repeated: it becomes `failed`. So an execution
 *   is sent at most once.
 *
 * While a claim runs its lease is renewed every third of its length.
 */
export class SequenceWorker extends Context.Service<SequenceWorker, {
  /** One drafter poll; answers how many executions it claimed. */
  readonly draftBatch: Effect.Effect<number>
  /** One sender poll; answers how many executions it claimed. */
  readonly sendBatch: Effect.Effect<number>
}>()("sequences/SequenceWorker") {
  static readonly layer = Layer.effect(SequenceWorker, Effect.gen(function*() {
    const config = yield* SequencesConfig
    const mail = yield* CampaignsConfig
    const app = yield* AppConfig
    const repo = yield* SequencesRepo
    const suppressions = yield* Suppressions
    const mailer = yield* Mailer
    const { key } = yield* TrackingSecret
    const modelContext = yield* Effect.context<Credits | Llm | ModelCatalog>()
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    /** Runs `work` over a claim while renewing its lease; `stopped` turns true when the lease is lost. */
    const underLease = (claim: ExecutionClaim, work: (stopped: Ref.Ref<boolean>) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        const stopped = yield* Ref.make(false)
        const keepLease = Effect.gen(function*() {
          while (true) {
            yield* Effect.sleep(Duration.millis(config.leaseMs / 3))
            const renewed = yield* repo.renew(claim.token, leaseUntil(yield* currentDate))
            if (!renewed) return yield* Ref.set(stopped, true)
          }
        })
        yield* Effect.raceFirst(work(stopped), Effect.andThen(keepLease, Effect.never))
        yield* repo.release(claim.token)
      })

    const draftOne = (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>) =>
      Effect.gen(function*() {
        if (yield* Ref.get(stopped)) return
        const sequence = yield* repo.get(execution.companyId, execution.sequenceId)
        const step = Option.isSome(sequence) ? sequence.value.steps[execution.stepIndex] : undefined
        const outcome = yield* Effect.provideContext(draft(step, execution), modelContext)
        const recorded = yield* repo.recordDraft(execution.id, claim.token, outcome, yield* currentDate)
        if (!recorded) yield* Effect.logWarning("Sequence draft lease lost before it was stored", { executionId: execution.id })
      })

    const resultOf = (execution: ExecutionRecord, sent: SendOutcome, next: () => ExecutionRecord | undefined, now: Date): SendResult => {
      switch (sent._tag) {
        case "Accepted":
          return { _tag: "Sent", messageId: sent.messageId, next: next() }
        case "TemporaryFailure":
          return { _tag: "Retry", at: retryAt(mail.retryBaseMs, execution.attempts, now), error: sent.response }
        case "PermanentFailure":
          return { _tag: "Failed", error: sent.response }
      }
    }

    const sendOne = (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>) =>
      Effect.gen(function*() {
        if (yield* Ref.get(stopped)) return
        const now = yield* currentDate
        if (yield* suppressions.isSuppressed(execution.companyId, execution.email)) {
          yield* repo.leave(execution.companyId, execution.email, "The contact is on the suppression list", now)
          return
        }
        const found = yield* repo.get(execution.companyId, execution.sequenceId)
        if (Option.isNone(found) || !(yield* repo.beginSend(execution.id, claim.token, now))) return
        const sequence = found.value
        const templates = parseTemplates(execution.subject ?? "", execution.body ?? "")
        if (Result.isFailure(templates)) {
          yield* repo.recordSend(execution.id, claim.token, { _tag: "Failed", error: templates.failure }, mail.maxAttempts, now)
          return
        }
        const urls = trackingUrls(app.publicBaseUrl, key, execution.id)
        const message = renderMessage(templates.success, execution, urls)
        const sent = yield* mailer.send({
          from: app.mailFrom,
          to: execution.email,
          subject: message.subject,
          html: message.html,
          text: message.text,
          headers: listUnsubscribeHeaders(urls.unsubscribe),
          messageId: `<${execution.id}@${addressOf(app.mailFrom).split("@")[1] ?? "localhost"}>`
        })
        const sentAt = yield* currentDate
        const nextStep = execution.stepIndex + 1
        const next = () =>
          nextStep < sequence.steps.length
            ? executionFor(sequence, nextStep, execution, sentAt, sentAt)
            : undefined
        const result = resultOf(execution, sent, next, sentAt)
        const recorded = yield* repo.recordSend(execution.id, claim.token, result, mail.maxAttempts, sentAt)
        if (!recorded) yield* Effect.logWarning("Sequence send lease lost before its outcome was stored", { executionId: execution.id })
        if (sent._tag === "PermanentFailure" && sent.hardBounce) {
          yield* suppressions.add(execution.companyId, execution.email, "hard_bounce")
          yield* repo.leave(execution.companyId, execution.email, "The address bounced", sentAt)
        }
      })

    const poll = (
      claimWith: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>,
      handle: (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>) => Effect.Effect<void>,
      concurrency: number
    ) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const claim = yield* claimWith(now, leaseUntil(now), config.batchSize)
        if (claim.executions.length > 0) {
          yield* underLease(claim, (stopped) =>
            Effect.forEach(claim.executions, (execution) => handle(claim, execution, stopped), { concurrency, discard: true }))
        }
        return claim.executions.length
      })

    return {
      draftBatch: poll(repo.claimDrafts, draftOne, config.draftConcurrency),
      sendBatch: poll(repo.claimSends, sendOne, mail.concurrency)
    }
  }))

  /** The background loops: each polls every `pollMs`, and again at once after a full batch. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* SequencesConfig
    if (!config.enabled) return
    const worker = yield* SequenceWorker
    const loop = (poll: Effect.Effect<number>, name: string) =>
      Effect.forkScoped(Effect.gen(function*() {
        while (true) {
          const claimed = yield* poll.pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.as(Effect.logError(`${name} poll failed`, cause), 0)
            )
          )
          if (claimed < config.batchSize) yield* Effect.sleep(Duration.millis(config.pollMs))
        }
      }))
    yield* loop(worker.draftBatch, "Sequence drafter")
    yield* loop(worker.sendBatch, "Sequence sender")
    yield* Effect.logInfo("Sequence worker started", { draftConcurrency: config.draftConcurrency })
  }))
}

/** The worker with its configuration from the environment, the `Mailer` and the tracking key; needs storage, `Credits` and an `Llm`. */
export const SequenceWorkerLive = SequenceWorker.worker.pipe(
  Layer.provide(SequenceWorker.layer),
  Layer.provide(TrackingSecret.layer),
  Layer.provide(Mailer.layer),
  Layer.provide(CampaignsConfig.layer),
  Layer.provide(SequencesConfig.layer)
)
