import { Cause, Context, Duration, Effect, Layer, Option, Ref, Result } from "effect"
import { Leads, type LeadJournal } from "../leads/Leads.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { MailConfig } from "../mail/MailConfig.ts"
import { senderOf } from "../mail/Message.ts"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import { Delivery, type DeliveryOutcome, type MailRoute, underLease } from "../messages/Delivery.ts"
import { parseTemplates } from "../messages/Message.ts"
import { OutreachConfig } from "../messages/OutreachConfig.ts"
import type { OutboundConfig } from "../../platform/OutboundPolicy.ts"
import type { SecretBox } from "../../platform/Secrets.ts"
import { currentDate } from "../../platform/Time.ts"
import { Storage } from "../../storage/Database.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import { draft } from "./Drafting.ts"
import { mailboxesFullReason, mailboxesGoneError, mailboxRoute, nextUtcDay, startThroughMailbox } from "./MailboxRotation.ts"
import { executionFor } from "./Sequences.ts"
import { SequencesConfig } from "./SequencesConfig.ts"
import type { ExecutionClaim, ExecutionRecord, SendResult, SequenceRecord } from "./SequenceRecords.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/** How one send goes out: through a mailbox (`through`, `mailboxId`) or the platform's mailer, and how it is marked in flight. */
interface SendRoute {
  readonly through: MailRoute | undefined
  readonly mailboxId: string | null
  readonly start: Effect.Effect<boolean>
}

/**
 * The sequence worker of a server process, two loops over one database,
 * leased as the task scheduler is:
 *
 * - the drafter claims unwritten drafts and has the model write each; a
 *   draft is stored only while the claim's lease is its own, so each
 *   execution gets exactly one draft whatever the number of workers;
 * - the sender claims approved executions that are due, marks each as in
 *   flight (under the lease) right before the SMTP transaction, and records
 *   the outcome with the contact's next execution right after the answer. A
 *   send whose worker died in between is never repeated: it becomes
 *   `uncertain`. So an execution is sent at most once.
 *
 * While a claim runs its lease is renewed every third of its length.
 */
export class SequenceWorker extends Context.Service<SequenceWorker, {
  /** At start on the embedded database (whose lock proves the holder dead): every lease still held ends now. */
  readonly takeOver: Effect.Effect<void>
  /** One drafter poll; answers how many executions it claimed. */
  readonly draftBatch: Effect.Effect<number>
  /** One sender poll; answers how many executions it claimed. */
  readonly sendBatch: Effect.Effect<number>
}>()("sequences/SequenceWorker") {
  static readonly layer = Layer.effect(SequenceWorker, Effect.gen(function*() {
    const config = yield* SequencesConfig
    const mail = yield* OutreachConfig
    const { from: mailFrom } = yield* MailConfig
    const repo = yield* SequencesRepo
    const suppressions = yield* Suppressions
    const delivery = yield* Delivery
    const leads = yield* Leads
    const storage = yield* Storage
    const modelContext = yield* Effect.context<Credits | Llm | ModelCatalog>()
    const mailboxContext = yield* Effect.context<SecretBox | OutboundConfig>()
    const rotationContext = yield* Effect.context<Effect.Services<ReturnType<typeof startThroughMailbox>>>()
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    const draftOne = (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>) =>
      Effect.gen(function*() {
        if (yield* Ref.get(stopped)) return
        const sequence = yield* repo.get(execution.companyId, execution.sequenceId)
        const step = Option.isSome(sequence) ? sequence.value.steps[execution.stepIndex] : undefined
        const outcome = yield* Effect.provideContext(draft(step, execution), modelContext)
        const recorded = yield* repo.recordDraft(execution.id, claim.token, outcome, yield* currentDate)
        if (!recorded) yield* Effect.logWarning("Sequence draft lease lost before it was stored", { executionId: execution.id })
      })

    const resultOf = (outcome: DeliveryOutcome, next: () => ExecutionRecord | undefined): SendResult =>
      outcome._tag === "Sent" ? { ...outcome, next: next() } : outcome

    /**
     * How a due send goes out: through the platform's mailer, or through one of the sequence's mailboxes
     * with today's send taken and the execution marked in flight; none: not now (put off to the next
     * day, failed, or the lease was lost).
     */
    const routeOf = (claim: ExecutionClaim, execution: ExecutionRecord, sequence: SequenceRecord, now: Date) =>
      Effect.gen(function*() {
        if (sequence.mailboxIds.length === 0) {
          const start = Effect.flatMap(currentDate, (at) => repo.beginSend(execution.id, claim.token, at))
          return Option.some<SendRoute>({ through: undefined, mailboxId: null, start })
        }
        const begin = (mailboxId: string) => repo.beginSend(execution.id, claim.token, now, mailboxId)
        const slot = yield* Effect.provideContext(startThroughMailbox(execution, sequence, begin, now), rotationContext)
        switch (slot._tag) {
          case "Lost":
            return Option.none<SendRoute>()
          case "Full":
            yield* repo.defer(execution.id, claim.token, nextUtcDay(now), mailboxesFullReason, now)
            return Option.none<SendRoute>()
          case "Gone":
            yield* repo.recordSend(execution.id, claim.token, { _tag: "Failed", error: mailboxesGoneError }, mail.maxAttempts, now)
            return Option.none<SendRoute>()
          case "Taken":
            // Marked in flight with the slot taken, just now.
            return Option.some<SendRoute>({ through: mailboxRoute(slot.mailbox, sequence, mailFrom, mailboxContext), mailboxId: slot.mailbox.id, start: Effect.succeed(true) })
        }
      })

    const sendOne = (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>, journal: LeadJournal) =>
      Effect.gen(function*() {
        if (yield* Ref.get(stopped)) return
        const now = yield* currentDate
        if (yield* suppressions.isSuppressed(execution.companyId, execution.email)) {
          yield* repo.leave(execution.companyId, execution.email, "The contact is on the suppression list", now)
          return
        }
        const found = yield* repo.get(execution.companyId, execution.sequenceId)
        if (Option.isNone(found)) return
        const sequence = found.value
        const templates = parseTemplates(execution.subject ?? "", execution.body ?? "")
        if (Result.isFailure(templates)) {
          yield* repo.recordSend(execution.id, claim.token, { _tag: "Failed", error: templates.failure }, mail.maxAttempts, now)
          return
        }
        const route = yield* routeOf(claim, execution, sequence, now)
        if (Option.isNone(route)) return
        const { through, mailboxId, start } = route.value
        const record = (outcome: DeliveryOutcome) =>
          Effect.gen(function*() {
            const sentAt = yield* currentDate
            const nextStep = execution.stepIndex + 1
            const next = () =>
              nextStep < sequence.steps.length ? executionFor(sequence, nextStep, { ...execution, mailboxId }, sentAt, sentAt) : undefined
            const recorded = yield* repo.recordSend(execution.id, claim.token, resultOf(outcome, next), mail.maxAttempts, sentAt)
            if (!recorded) yield* Effect.logWarning("Sequence send lease lost before its outcome was stored", { executionId: execution.id })
          })
        yield* delivery.deliver({ ...execution, from: senderOf(sequence, mailFrom), templates: templates.success, through }, {
          start,
          record,
          bounced: () => Effect.flatMap(currentDate, (at) => repo.leave(execution.companyId, execution.email, "The address bounced", at))
        }, journal)
      })

    const poll = (
      claimWith: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>,
      handle: (claim: ExecutionClaim, execution: ExecutionRecord, stopped: Ref.Ref<boolean>, journal: LeadJournal) => Effect.Effect<void>,
      concurrency: number
    ) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const claim = yield* claimWith(now, leaseUntil(now), config.batchSize)
        if (claim.executions.length > 0) {
          const journal = yield* leads.journal
          yield* underLease(
            config.leaseMs,
            (expiresAt) => repo.renew(claim.token, expiresAt),
            repo.release(claim.token),
            (stopped) =>
              Effect.forEach(claim.executions, (execution) => handle(claim, execution, stopped, journal), { concurrency, discard: true })
                .pipe(Effect.ensuring(journal.flush))
          )
        }
        return claim.executions.length
      })

    const abandonThenClaim = (now: Date, expiresAt: Date, limit: number) =>
      Effect.gen(function*() {
        const abandoned = yield* repo.abandonSends(now)
        if (abandoned.length > 0) {
          yield* Effect.logWarning("Took over sequence sends left in flight by a stopped worker: marked uncertain, not sent again", {
            executionIds: abandoned
          })
        }
        return yield* repo.claimSends(now, expiresAt, limit)
      })

    return {
      takeOver: Effect.gen(function*() {
        if (storage.backend !== "pglite") return
        const taken = yield* repo.reclaim(yield* currentDate)
        if (taken > 0) yield* Effect.logWarning("Took over the sequence leases of a stopped process", { leases: taken })
      }),
      draftBatch: poll(repo.claimDrafts, draftOne, config.draftConcurrency),
      sendBatch: poll(abandonThenClaim, sendOne, mail.concurrency)
    }
  }))

  /** The background loops: each polls every `pollMs`, and again at once after a full batch. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* SequencesConfig
    if (!config.enabled) return
    const worker = yield* SequenceWorker
    yield* worker.takeOver
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

/** The worker with its configuration from the environment and the delivery step; needs storage, the `Mailer`, `Credits` and an `Llm`. */
export const SequenceWorkerLive = SequenceWorker.worker.pipe(
  Layer.provide(SequenceWorker.layer),
  Layer.provide(Delivery.live),
  Layer.provide(SequencesConfig.layer)
)
