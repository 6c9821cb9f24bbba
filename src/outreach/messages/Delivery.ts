import { Context, Duration, Effect, Layer, Option, Ref, Result } from "effect"
import { SqlClient } from "effect/sql"
import { cachedSigning } from "../domains/Senders.ts"
import type { LeadContact, LeadJournal } from "../leads/Leads.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { Mailer } from "../mail/Mailer.ts"
import { addressOf, listUnsubscribeHeaders, type OutgoingMessage, type SendOutcome } from "../mail/Message.ts"
import { type DkimSettings, MailConfig } from "../mail/MailConfig.ts"
import { AppConfig } from "../../platform/AppConfig.ts"
import { currentDate } from "../../platform/Time.ts"
import { type MessageTemplates, renderMessage } from "./Message.ts"
import { OutreachConfig } from "./OutreachConfig.ts"
import { replyAddressOf } from "./ReplyAddresses.ts"
import { trackingUrls } from "./Tracking.ts"
import { TrackingSecret } from "./TrackingSecret.ts"

/** What one delivery attempt came to, as the sender records it. */
export type DeliveryOutcome =
  | { readonly _tag: "Sent"; readonly messageId: string }
  | { readonly _tag: "Retry"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: string }

/** One outreach e-mail to hand to the mail server. */
export interface Outgoing {
  /** The campaign recipient's or sequence execution's id: it names the tracking links and the Message-ID. */
  readonly id: string
  readonly companyId: string
  readonly email: string
  readonly fields: Readonly<Record<string, string>>
  /** Deliveries of it that failed temporarily so far. */
  readonly attempts: number
  /** `"Name" <address>`; `MAIL_FROM` when absent. */
  readonly from?: string | undefined
  readonly replyTo?: string | undefined
  readonly templates: MessageTemplates
  /**
   * The sender's check (`Delivery.signing`) when the sender made it already for a whole batch: the key to
   * sign with, or why the sender is refused. Absent: checked for this message.
   */
  readonly signing?: Result.Result<Option.Option<DkimSettings>, string> | undefined
  /** What the message belongs to, for the lead's timeline. */
  readonly campaignId?: string | undefined
  readonly sequenceId?: string | undefined
  /**
   * Sent through this instead of the `Mailer` (a mailbox's own SMTP server), from its address: that server
   * authenticates the sender, so the sending-domain check, DKIM and the platform's reply address are left to it.
   */
  readonly through?: MailRoute | undefined
}

/** Another way out than the `Mailer`: a sender address and how a message goes. */
export interface MailRoute {
  readonly from: string
  readonly send: (message: OutgoingMessage) => Effect.Effect<SendOutcome>
}

/** What the sender does around the SMTP transaction. */
export interface DeliverySteps {
  /** Records the message as in flight, right before the transaction; false: do not send it. */
  readonly start: Effect.Effect<boolean>
  /** Records the outcome, right after the server's answer. */
  readonly record: (outcome: DeliveryOutcome) => Effect.Effect<void>
  /** A hard bounce, with the server's answer: in the transaction that records it and suppresses the address. */
  readonly bounced: (reason: string) => Effect.Effect<void>
}

/** The person a message went to, as the lead's record knows them: the address and the row's names and company. */
const contactOf = ({ email, fields }: Outgoing): LeadContact => ({
  email,
  firstName: fields.firstName,
  lastName: fields.lastName,
  company: fields.company
})

/** When a message that failed temporarily `attempts` times before is tried again: doubling waits, at most an hour. */
export const retryAt = (retryBaseMs: number, attempts: number, now: Date) =>
  new Date(now.getTime() + Math.min(retryBaseMs * 2 ** attempts, 3_600_000))

/**
 * The sending step campaigns and sequences share: render the message for its
 * recipient (tracked links, open pixel, unsubscribe link and headers), record
 * it as in flight once the mailer's pacing lets it go, hand it to the
 * `Mailer`, and record the outcome of the server's answer at once. A hard
 * bounce then puts the address on the company's suppression list. A process
 * that dies between `start` and `record` leaves the message in flight: the
 * sender shows it as uncertain and does not send it again by itself.
 */
export class Delivery extends Context.Service<Delivery, {
  /**
   * May the company send as `from` (`MAIL_FROM`, or an address of a verified domain): the DKIM key to sign
   * with (none: `DKIM_*`, if configured), or why not. A passed check is cached at the access revision.
   */
  readonly signing: (companyId: string, from: string) => Effect.Effect<Result.Result<Option.Option<DkimSettings>, string>>
  /**
   * Delivers one message with the sender's steps; false when `start` refused it (nothing was sent).
   * A sent message and a hard bounce are noted in `journal`, for the lead's timeline.
   */
  readonly deliver: (outgoing: Outgoing, steps: DeliverySteps, journal: LeadJournal) => Effect.Effect<boolean>
}>()("outreach/Delivery") {
  static readonly layer = Layer.effect(Delivery, Effect.gen(function*() {
    const config = yield* OutreachConfig
    const app = yield* AppConfig
    const mail = yield* MailConfig
    const mailer = yield* Mailer
    const suppressions = yield* Suppressions
    const { key } = yield* TrackingSecret
    const signingFor = yield* cachedSigning
    const senders = yield* Effect.context<Effect.Services<ReturnType<typeof signingFor>>>()
    const sql = yield* SqlClient.SqlClient

    const outcomeOf = (sent: SendOutcome, attempts: number, now: Date): DeliveryOutcome => {
      switch (sent._tag) {
        case "Accepted":
          return { _tag: "Sent", messageId: sent.messageId }
        case "TemporaryFailure":
          return { _tag: "Retry", at: retryAt(config.retryBaseMs, attempts, now), error: sent.response }
        case "PermanentFailure":
          return { _tag: "Failed", error: sent.response }
      }
    }

    const signing = (companyId: string, from: string) =>
      Effect.result(Effect.provideContext(signingFor(companyId, from), senders)).pipe(
        Effect.map(Result.mapError((refused) => refused.message))
      )

    return {
      signing,
      // Untraced: once per message of a campaign, where a span of its own (even unrecorded) cost ~7 µs per call.
      deliver: Effect.fnUntraced(function*(outgoing: Outgoing, steps: DeliverySteps, journal: LeadJournal) {
        const urls = trackingUrls(app.publicBaseUrl, key, outgoing.id)
        const message = renderMessage(outgoing.templates, outgoing, urls)
        const through = outgoing.through
        const from = through?.from ?? outgoing.from ?? mail.from
        // The sender is checked again for every message (or batch): a domain deleted or failing since stops the sending here.
        const signed = through === undefined
          ? outgoing.signing ?? (yield* signing(outgoing.companyId, from))
          : Result.succeed(Option.none<DkimSettings>())
        if (Result.isFailure(signed)) {
          if (!(yield* steps.start)) return false
          yield* steps.record({ _tag: "Failed", error: signed.failure })
          return true
        }
        const issuedReplyTo = through === undefined
          ? Option.getOrUndefined(Option.map(config.replyDomain, (domain) => replyAddressOf(key, domain, outgoing.companyId, outgoing.id)))
          : undefined
        const rendered: OutgoingMessage = {
          from,
          to: outgoing.email,
          replyTo: outgoing.replyTo ?? issuedReplyTo,
          subject: message.subject,
          html: message.html,
          text: message.text,
          headers: listUnsubscribeHeaders(urls.unsubscribe),
          // One Message-ID per recipient: unique, and the same if a crash ever sends it twice.
          messageId: `<${outgoing.id}@${addressOf(from).split("@")[1] ?? "localhost"}>`,
          dkim: Option.getOrUndefined(signed.success)
        }
        const sent = through === undefined
          ? yield* mailer.sendStarting(rendered, steps.start)
          : yield* Effect.flatMap(steps.start, (started) => started ? Effect.map(through.send(rendered), Option.some) : Effect.succeedNone)
        if (Option.isNone(sent)) return false
        // The outcome is written the moment the server has answered, before anything else.
        const at = yield* currentDate
        const recorded = steps.record(outcomeOf(sent.value, outgoing.attempts, at))
        const event = { companyId: outgoing.companyId, at, contact: contactOf(outgoing), campaignId: outgoing.campaignId, sequenceId: outgoing.sequenceId }
        if (sent.value._tag === "PermanentFailure" && sent.value.hardBounce) {
          const reason = sent.value.response
          // Recorded, suppressed and announced (the sender's `bounced`, e.g. its webhook event) together.
          yield* sql.withTransaction(Effect.all([
            recorded,
            suppressions.add(outgoing.companyId, outgoing.email, "hard_bounce"),
            steps.bounced(reason)
          ], { discard: true })).pipe(Effect.orDie)
          yield* journal.note({ ...event, type: "bounced", detail: { error: reason } })
        } else {
          yield* recorded
          if (sent.value._tag === "Accepted") yield* journal.note({ ...event, type: "sent", detail: { subject: message.subject } })
        }
        return true
      })
    }
  }))

  /** With the settings from the environment, the tracking key and the process's `Mailer`; needs storage, `AppConfig` and `MailConfig`. */
  static readonly live = Delivery.layer.pipe(
    Layer.provideMerge(TrackingSecret.layer),
    Layer.provideMerge(OutreachConfig.layer)
  )
}

/**
 * Runs `work` over a leased claim while renewing the lease every third of
 * `leaseMs`; `stopped` turns true when a renewal finds nothing held any more
 * (lease lost, or the work was paused or cancelled), so `work` starts no
 * further message. What the claim did not finish is released at once.
 */
export const underLease = (
  leaseMs: number,
  renew: (expiresAt: Date) => Effect.Effect<boolean>,
  release: Effect.Effect<void>,
  work: (stopped: Ref.Ref<boolean>) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const stopped = yield* Ref.make(false)
    const keepLease = Effect.gen(function*() {
      while (true) {
        yield* Effect.sleep(Duration.millis(leaseMs / 3))
        const now = yield* currentDate
        if (!(yield* renew(new Date(now.getTime() + leaseMs)))) return yield* Ref.set(stopped, true)
      }
    })
    yield* Effect.raceFirst(work(stopped), Effect.andThen(keepLease, Effect.never))
    yield* release
  })
