import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { Leads } from "../leads/Leads.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import type { Llm, ModelCatalog } from "../llm/Llm.ts"
import { OutreachSenders, type TrackedMessage } from "../outreach/Outreach.ts"
import { newId } from "../platform/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import { outboxOn } from "../storage/Outbox.ts"
import type { Credits } from "../usage/Credits.ts"
import type { Classification } from "./Api.ts"
import { classify } from "./Classifier.ts"
import { type InboundMail, readInbound, UnreadableMail } from "./InboundMail.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { type MessageRecord, type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Taking in one inbound message — the one path the IMAP poller and inbound
 * SMTP share. The message joins the thread of what it answers: one of our
 * outreach messages or an earlier message of a thread (by `In-Reply-To` and
 * `References`, and a bounce report's returned Message-ID), else the latest
 * thread with the same sender and subject — always within the companies the
 * message may belong to, so a forged `In-Reply-To` naming another company's
 * message joins nothing of theirs. It is classified, stored once per
 * company (by Message-ID), and its effects follow once: a reply counts and
 * stops sequences, an unsubscribe request suppresses, a hard bounce
 * suppresses and marks the message bounced.
 */

/** Where a message arrived, which decides the companies it may belong to. */
export interface Destination {
  /** The companies it may be for, each with the mailbox it came through; undefined: any company whose message it answers (the shared `MAIL_FROM`). */
  readonly companies: ReadonlyArray<{ readonly companyId: string; readonly mailboxId: string | null }> | undefined
  /** The thread a reply address the platform issued names (its company is the only one in `companies`). */
  readonly threadId?: string | undefined
  /** The outreach message (campaign recipient, sequence execution) a reply address the platform issued names (its company is the only one in `companies`). */
  readonly answers?: string | undefined
}

export type IngestOutcome =
  | { readonly _tag: "Stored"; readonly companyId: string; readonly threadId: string; readonly classification: Classification }
  | { readonly _tag: "Duplicate"; readonly companyId: string }
  /** Nobody it may belong to: mail to the shared address that answers none of our messages. */
  | { readonly _tag: "Dropped"; readonly reason: string }

/** Our outreach Message-IDs are `<id@domain>` with the recipient's or execution's id (`src/outreach/Delivery.ts`). */
const outreachId = (messageId: string) => /^<([a-z]{2,10}_[0-9a-f]{32,48})@[^<>]+>$/.exec(messageId)?.[1]

/** `Re: Fwd: AW: Hello` → `hello`: what a reply's subject is matched on. */
export const subjectKey = (subject: string) =>
  subject.replace(/^(\s*(re|fwd?|aw|sv|antw|wg|tr)\s*(\[\d+\])?\s*:\s*)+/i, "").trim().toLowerCase().slice(0, 500)

export class Ingestion extends Context.Service<Ingestion, {
  /** Takes in one raw message; fails with `UnreadableMail` (naming why) for what is too large or not a message. */
  readonly ingest: (raw: Buffer, destination: Destination) => Effect.Effect<IngestOutcome, UnreadableMail>
}>()("inbox/Ingestion") {
  static readonly layer = Layer.effect(Ingestion, Effect.gen(function*() {
    const config = yield* InboxConfig
    const threads = yield* ThreadsRepo
    const sql = yield* SqlClient.SqlClient
    const outbox = outboxOn(sql)
    const companies = yield* CompaniesRepo
    const suppressions = yield* Suppressions
    const senders = yield* OutreachSenders
    const leads = yield* Leads
    const leadsRepo = yield* LeadsRepo
    const modelContext = yield* Effect.context<Credits | Llm | ModelCatalog>()

    /** The outreach message of ours that `references` name, sent by one of `allowed` (any company when undefined). */
    const answeredMessage = (references: ReadonlyArray<string>, allowed: ReadonlyArray<string> | undefined) =>
      Effect.gen(function*() {
        for (const reference of references) {
          const id = outreachId(reference)
          if (id === undefined) continue
          for (const sender of senders) {
            const found = yield* sender.message(id)
            if (Option.isSome(found) && found.value.messageId === reference && (allowed === undefined || allowed.includes(found.value.companyId))) {
              return found
            }
          }
        }
        return Option.none<TrackedMessage>()
      })

    /** The outreach message of tracking id `id`, sent by one of `allowed`. */
    const outreachMessage = (id: string, allowed: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(senders, (sender) => sender.message(id)), (found) =>
        Option.filter(Option.firstSomeOf(found), (message) => allowed.includes(message.companyId)))

    const outreachOf = (thread: ThreadRecord) => {
      const id = thread.campaignRecipientId ?? thread.sequenceExecutionId
      return id === null ? Effect.succeedNone : outreachMessage(id, [thread.companyId])
    }

    const newThread = (companyId: string, mailboxId: string | null, mail: InboundMail, contact: string, answered: Option.Option<TrackedMessage>, now: Date) =>
      threads.create({
        id: newId("thr"),
        companyId,
        mailboxId,
        subject: mail.subject,
        subjectKey: subjectKey(mail.subject),
        contactEmail: contact,
        contactKey: contact.toLowerCase(),
        status: "open",
        classification: null,
        unread: true,
        leadId: null,
        campaignId: Option.isSome(answered) && "campaignId" in answered.value.origin ? answered.value.origin.campaignId : null,
        campaignRecipientId: Option.isSome(answered) && "campaignId" in answered.value.origin ? answered.value.id : null,
        sequenceId: Option.isSome(answered) && "sequenceId" in answered.value.origin ? answered.value.origin.sequenceId : null,
        sequenceExecutionId: Option.isSome(answered) && "sequenceId" in answered.value.origin ? answered.value.id : null,
        messageCount: 0,
        lastMessageAt: now,
        createdAt: now,
        updatedAt: now
      })

    /**
     * What a new inbound message does to the outreach it answers and to the
     * contact's lead: a bounce marks the message and (hard) suppresses; an
     * unsubscribe request suppresses; a person's reply counts, stops
     * sequences, and moves the lead (`replied`, or `interested` /
     * `not_interested` as classified), each on the lead's timeline.
     */
    const effects = (thread: ThreadRecord, contact: string, mail: InboundMail, classification: Classification, answered: Option.Option<TrackedMessage>, now: Date) =>
      Effect.gen(function*() {
        const companyId = thread.companyId
        const origin = Option.isSome(answered) ? answered.value.origin : {}
        const event = { companyId, at: now, contact: { email: contact }, threadId: thread.id, ...origin, detail: { classification, subject: mail.subject } }
        if (mail.bounce !== undefined) {
          if (mail.bounce.hard) yield* suppressions.add(companyId, contact, "hard_bounce")
          if (Option.isSome(answered)) yield* answered.value.bounced(mail.bounce.hard, now)
          if (mail.bounce.hard) yield* leads.record([{ ...event, type: "bounced", detail: { status: mail.bounce.status, diagnostic: mail.bounce.diagnostic } }])
        } else if (classification === "unsubscribe") {
          yield* suppressions.add(companyId, contact, "unsubscribed")
          yield* Effect.forEach(senders, (sender) => sender.unsubscribed(companyId, contact, now), { discard: true })
          yield* leads.record([{ ...event, type: "unsubscribed" }])
        } else if (!mail.automatic && classification !== "out_of_office" && classification !== "bounce") {
          // What a machine sent (an absence notice, a delay report) is no reply.
          if (Option.isSome(answered)) yield* answered.value.replied(now)
          yield* leads.record([{ ...event, type: "replied" }])
          if (classification === "interested" || classification === "not_interested") {
            yield* leads.setStatus(companyId, { email: contact }, classification, { threadId: thread.id })
          }
        }
        if (thread.leadId === null) {
          const lead = yield* leadsRepo.findByEmail(companyId, contact)
          if (Option.isSome(lead)) yield* threads.setLead(thread.id, lead.value.id)
        }
      })

    const ingest = (raw: Buffer, destination: Destination) =>
      Effect.gen(function*() {
        if (raw.length > config.inboundMaxBytes) {
          return yield* Effect.fail(new UnreadableMail({ message: `Message too large: ${raw.length} bytes, at most ${config.inboundMaxBytes}` }))
        }
        const mail = yield* readInbound(raw)
        const allowed = destination.companies?.map((entry) => entry.companyId)
        let answered = yield* answeredMessage(mail.references, allowed)
        // A reply address names the message even when the replier's client dropped the threading headers.
        if (Option.isNone(answered) && destination.answers !== undefined && allowed !== undefined) {
          answered = yield* outreachMessage(destination.answers, allowed)
        }
        const scope = Option.isSome(answered) ? [answered.value.companyId] : allowed
        let thread = destination.threadId !== undefined && allowed?.length === 1
          ? yield* threads.get(allowed[0]!, destination.threadId)
          : yield* threads.byMessageIds(scope, mail.references)
        const companyId = Option.isSome(answered) ? answered.value.companyId
          : Option.isSome(thread) ? thread.value.companyId
          : allowed?.length === 1 ? allowed[0]! : undefined
        if (companyId === undefined) {
          return { _tag: "Dropped", reason: allowed === undefined ? "It answers no message of ours" : "It answers no message of the companies holding this address" } as const
        }
        const contact = Option.isSome(answered) ? answered.value.email : mail.bounce?.recipient ?? mail.from
        const now = yield* currentDate
        const mailboxId = destination.companies?.find((entry) => entry.companyId === companyId)?.mailboxId ?? null
        if (Option.isNone(thread)) thread = yield* threads.byContact(companyId, contact.toLowerCase(), subjectKey(mail.subject))
        if (Option.isNone(answered) && Option.isSome(thread)) answered = yield* outreachOf(thread.value)
        const company = yield* companies.get(companyId)
        if (Option.isNone(company)) return { _tag: "Dropped", reason: "The company is gone" } as const
        if (yield* threads.hasMessage(companyId, mail.messageId)) return { _tag: "Duplicate", companyId } as const
        const payer = { organizationId: company.value.organizationId, companyId, userId: null }
        const classification = yield* Effect.provideContext(classify(payer, mail), modelContext)
        const target = Option.isSome(thread) ? thread.value : yield* newThread(companyId, mailboxId, mail, contact, answered, now)
        const message: MessageRecord = {
          id: newId("msg"),
          companyId,
          threadId: target.id,
          direction: "inbound",
          messageId: mail.messageId,
          fromAddress: mail.from,
          toAddresses: mail.to,
          subject: mail.subject,
          textBody: mail.text,
          htmlBody: mail.html,
          receivedAt: mail.date !== undefined && Math.abs(mail.date.getTime() - now.getTime()) < 7 * 86_400_000 ? mail.date : now,
          automatic: mail.automatic,
          classification
        }
        // The message and its webhook event commit together.
        const stored = yield* sql.withTransaction(Effect.gen(function*() {
          if (!(yield* threads.addMessage(message))) return false
          yield* outbox.emit(companyId, "inbox.reply_received", {
            threadId: target.id,
            messageId: message.id,
            from: mail.from,
            subject: mail.subject,
            classification,
            automatic: mail.automatic,
            leadId: target.leadId,
            ...(Option.isSome(answered) ? answered.value.origin : {}),
            receivedAt: message.receivedAt.toISOString()
          })
          return true
        })).pipe(Effect.orDie)
        if (!stored) return { _tag: "Duplicate", companyId } as const
        yield* effects(target, contact, mail, classification, answered, now)
        return { _tag: "Stored", companyId, threadId: target.id, classification } as const
      })

    return { ingest }
  }))
}
