import { Cause, Context, Duration, Effect, Layer, Option, Ref, Result, Semaphore } from "effect"
import type { DomainsRepo } from "../domains/DomainsRepo.ts"
import type { DkimSettings } from "../mail/MailConfig.ts"
import { Leads, type LeadJournal } from "../leads/Leads.ts"
import type { SmartListsRepo } from "../leads/SmartListsRepo.ts"
import type { ListsRepo } from "../lists/ListsRepo.ts"
import type { SecretBox } from "../../platform/Secrets.ts"
import { senderOf } from "../mail/Message.ts"
import { Delivery, type DeliveryOutcome, underLease } from "../messages/Delivery.ts"
import { type MessageTemplates, parseTemplates } from "../messages/Message.ts"
import { OutreachConfig } from "../messages/OutreachConfig.ts"
import { MailConfig } from "../mail/MailConfig.ts"
import { currentDate } from "../../platform/Time.ts"
import { Storage } from "../../storage/Database.ts"
import { groupCommit } from "../../storage/GroupCommit.ts"
import { CampaignsConfig } from "./CampaignsConfig.ts"
import { type CampaignRecord, CampaignsRepo } from "./CampaignsRepo.ts"
import type { LeaseWrite, RecipientClaim } from "./RecipientLeases.ts"
import type { RecipientRecord } from "./RecipientRecord.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"
import { readyToSend, startSending } from "./Sending.ts"

/**
 * The campaign worker of a server process, two loops over one database:
 *
 * - the starter claims scheduled campaigns whose time has come (leased, as
 *   the task scheduler does) and starts them: their recipients are made;
 * - the sender claims pending recipients of sending campaigns in leased
 *   batches, delivers each through the `Mailer`, and records each outcome in
 *   a statement that also checks that the lease is still its own. While a
 *   batch runs its lease is renewed every third of its length; a renewal
 *   that finds the campaign paused or cancelled (or the lease lost) stops the
 *   batch from starting further messages, and what it did not send is
 *   released at once.
 *
 * The sender runs `senderLoops` such loops side by side, so that one batch's
 * claim, lead journal and completion check overlap the other's sending; one
 * semaphore keeps the process's SMTP transactions to `MAIL_CONCURRENCY`, each
 * held from the message's in-flight mark to the server's answer.
 *
 * A recipient is therefore delivered at most once: one the process dies with
 * in flight (recorded as started, its answer not recorded) becomes
 * `uncertain` and is not sent again (docs/campaigns.md).
 */
export class CampaignWorker extends Context.Service<CampaignWorker, {
  /** One starter poll: starts due scheduled campaigns; answers how many it claimed. */
  readonly startDue: Effect.Effect<number>
  /** One sender poll: claims a batch, delivers it, completes finished campaigns; answers how many recipients it claimed. */
  readonly sendBatch: Effect.Effect<number>
  /**
   * At start on the embedded database, whose data-folder lock proves no other process can hold a lease:
   * every lease still held is a dead process's and ends now (logged), instead of after `MAIL_LEASE_MS`.
   */
  readonly takeOver: Effect.Effect<void>
}>()("campaigns/CampaignWorker") {
  static readonly layer = Layer.effect(CampaignWorker, Effect.gen(function*() {
    const config = yield* CampaignsConfig
    const outreach = yield* OutreachConfig
    const mail = yield* MailConfig
    const campaigns = yield* CampaignsRepo
    const recipients = yield* RecipientsRepo
    const delivery = yield* Delivery
    const leads = yield* Leads
    const storage = yield* Storage
    const context = yield* Effect.context<
      CampaignsRepo | RecipientsRepo | ListsRepo | SmartListsRepo | DomainsRepo | SecretBox | MailConfig
    >()
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)
    // Shared by the sender's overlapping batches: at most `MAIL_CONCURRENCY` messages in flight in the process.
    const inFlight = yield* Semaphore.make(outreach.concurrency)
    /**
     * One message's hold on a slot of `inFlight`: taken right before its in-flight mark, given back once, on
     * the server's answer (before the answer is written, so that the next message's mark joins that write in
     * one statement), or when the delivery ends without one.
     */
    const slotHold = Effect.sync(() => {
      let held = false
      return {
        take: Effect.uninterruptibleMask((restore) =>
          Effect.tap(restore(inFlight.take(1)), () => Effect.sync(() => void (held = true)))
        ),
        free: Effect.suspend(() => {
          if (!held) return Effect.void
          held = false
          return Effect.asVoid(inFlight.release(1))
        })
      }
    })
    // In-flight marks and outcomes of the messages in flight, coalesced: those that come while one statement
    // runs share the next (docs/campaigns.md, "What a crash does").
    const written = groupCommit(
      (writes: ReadonlyArray<LeaseWrite>) => recipients.write(writes, outreach.maxAttempts),
      outreach.concurrency * senderLoops
    )

    const fail = (campaign: CampaignRecord, reason: string) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        yield* campaigns.move(campaign.companyId, campaign.id, ["scheduled"], "failed", { errorMessage: reason }, now)
        yield* Effect.logWarning("Scheduled campaign could not start", { campaignId: campaign.id, reason })
      })

    const start = (campaign: CampaignRecord) =>
      readyToSend(campaign, undefined).pipe(
        Effect.flatMap((recipients) => startSending(campaign, recipients)),
        // What keeps a scheduled campaign from starting (no list, no rows, no body, a sender not allowed, a lost race) fails it.
        Effect.catch((refused) => fail(campaign, refused.message)),
        Effect.provideContext(context)
      )

    /**
     * Each campaign of a batch, read and prepared once, with its sender checked once (a domain deleted meanwhile
     * stops the sending at the next batch); the reason when one cannot be prepared (it was checked at send).
     */
    const campaignsOf = (claim: RecipientClaim) =>
      Effect.gen(function*() {
        const found = new Map<string, Result.Result<Prepared, string>>()
        for (const recipient of claim.recipients) {
          if (found.has(recipient.campaignId)) continue
          const campaign = yield* campaigns.get(recipient.companyId, recipient.campaignId)
          if (Option.isNone(campaign)) {
            found.set(recipient.campaignId, Result.fail("Campaign not found"))
            continue
          }
          const from = senderOf(campaign.value, mail.from)
          const signing = yield* delivery.signing(campaign.value.companyId, from)
          found.set(
            recipient.campaignId,
            Result.map(
              parseTemplates(campaign.value.subject, campaign.value.bodyDocument.html),
              (templates) => ({ campaign: campaign.value, from, signing, templates })
            )
          )
        }
        return found
      })

    /**
     * A failure is written on its own: a hard bounce records it in the transaction that suppresses the address,
     * which a group's statement (run by another fiber) would be outside of.
     */
    const record = (claim: RecipientClaim, recipient: RecipientRecord, outcome: DeliveryOutcome) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const recorded = outcome._tag === "Failed"
          ? yield* recipients.record(recipient.id, claim.token, outcome, outreach.maxAttempts, now)
          : yield* written({ id: recipient.id, token: claim.token, at: now, change: outcome })
        if (!recorded) {
          yield* Effect.logWarning("Recipient lease lost before its delivery was recorded", {
            recipientId: recipient.id,
            outcome: outcome._tag
          })
        }
      })

    const deliver = (
      claim: RecipientClaim,
      { campaign, from, signing, templates }: Prepared,
      recipient: RecipientRecord,
      stopped: Ref.Ref<boolean>,
      journal: LeadJournal
    ) =>
      Effect.gen(function*() {
        if (yield* Ref.get(stopped)) return
        const slot = yield* slotHold
        const begin = Effect.flatMap(currentDate, (now) => written({ id: recipient.id, token: claim.token, at: now, change: { _tag: "Begin" } }))
        yield* delivery.deliver({
          ...recipient,
          from,
          signing,
          replyTo: campaign.replyTo ?? undefined,
          templates,
          campaignId: campaign.id
        }, {
          start: slot.take.pipe(Effect.andThen(begin), Effect.tap((started) => started ? Effect.void : slot.free)),
          record: (outcome) => Effect.andThen(slot.free, record(claim, recipient, outcome)),
          bounced: (reason) => Effect.flatMap(currentDate, (now) => recipients.bounced(recipient, reason, now))
        }, journal).pipe(Effect.ensuring(slot.free))
      })

    const sendClaim = (claim: RecipientClaim) =>
      Effect.gen(function*() {
        const byCampaign = yield* campaignsOf(claim)
        const journal = yield* leads.journal
        yield* underLease(
          config.leaseMs,
          (expiresAt) => recipients.renew(claim.token, expiresAt),
          recipients.release(claim.token),
          (stopped) =>
            Effect.forEach(
              claim.recipients,
              (recipient) =>
                Result.match(byCampaign.get(recipient.campaignId) ?? Result.fail("Campaign not found"), {
                  onSuccess: (prepared) => deliver(claim, prepared, recipient, stopped, journal),
                  onFailure: (error) => record(claim, recipient, { _tag: "Failed", error })
                }),
              { concurrency: outreach.concurrency, discard: true }
            ).pipe(Effect.ensuring(journal.flush))
        )
      })

    return {
      takeOver: Effect.gen(function*() {
        if (storage.backend !== "pglite") return
        const taken = yield* recipients.reclaim(yield* currentDate)
        if (taken > 0) yield* Effect.logWarning("Took over the campaign leases of a stopped process", { leases: taken })
      }),
      startDue: Effect.gen(function*() {
        const now = yield* currentDate
        const due = yield* campaigns.claimDue(now, leaseUntil(now), config.batchSize)
        yield* Effect.forEach(due, start, { discard: true })
        return due.length
      }),
      sendBatch: Effect.gen(function*() {
        const now = yield* currentDate
        const abandoned = yield* recipients.abandon(now)
        if (abandoned.length > 0) {
          yield* Effect.logWarning("Took over recipients left in flight by a stopped worker: marked uncertain, not sent again", {
            recipientIds: abandoned.map((recipient) => recipient.id),
            leases: [...new Set(abandoned.map((recipient) => recipient.leaseToken))]
          })
        }
        const claim = yield* recipients.claim(now, leaseUntil(now), config.batchSize)
        if (claim.recipients.length > 0) yield* sendClaim(claim)
        const completed = yield* recipients.completeFinished(yield* currentDate)
        if (completed.length > 0) yield* Effect.logInfo("Campaigns finished", { campaignIds: completed })
        return claim.recipients.length
      })
    }
  }))

  /**
   * The background loops of a server process: each polls every `MAIL_POLL_MS`,
   * and the sender again at once while a poll found a full batch.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* CampaignsConfig
    if (!config.enabled) return
    const worker = yield* CampaignWorker
    yield* worker.takeOver
    const loop = (poll: Effect.Effect<number>, name: string) =>
      Effect.forkScoped(Effect.gen(function*() {
        while (true) {
          const claimed = yield* poll.pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.failCause(cause)
                : Effect.as(Effect.logError(`${name} poll failed`, cause), 0)
            )
          )
          if (claimed < config.batchSize) yield* Effect.sleep(Duration.millis(config.pollMs))
        }
      }))
    yield* loop(worker.startDue, "Campaign starter")
    for (let sender = 0; sender < senderLoops; sender++) yield* loop(worker.sendBatch, "Campaign sender")
    yield* Effect.logInfo("Campaign worker started", { batchSize: config.batchSize })
  }))
}

/** Sender loops per process, each with its own claimed batch (see `CampaignWorker`). */
export const senderLoops = 2

interface Prepared {
  readonly campaign: CampaignRecord
  readonly from: string
  readonly signing: Result.Result<Option.Option<DkimSettings>, string>
  readonly templates: MessageTemplates
}

/** The worker with its configuration from the environment and the delivery step; needs storage, the `Mailer` and `MailConfig`. */
export const CampaignWorkerLive = CampaignWorker.worker.pipe(
  Layer.provide(CampaignWorker.layer),
  Layer.provide(Delivery.live),
  Layer.provide(CampaignsConfig.layer)
)
