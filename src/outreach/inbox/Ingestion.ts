import { Context, Effect, Layer, Option } from "effect"
import { CompaniesRepo } from "../../accounts/companies/CompaniesRepo.ts"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import { findMessage, OutreachSenders, type TrackedMessage } from "../messages/Outreach.ts"
import { newId } from "../../platform/Ids.ts"
import { currentDate } from "../../platform/Time.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import type { Classification } from "./Api.ts"
import { classify } from "./Classifier.ts"
import { makeInboundCommit, type ReadyMessage } from "./InboundCommit.ts"
import { type InboundMail, readInbound, UnreadableMail } from "./InboundMail.ts"
import { type Destination } from "./InboundQueueRepo.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Taking in one inbound message — the one path the IMAP poller and inbound
 * SMTP share. The message joins the thread of what it answers: one of our
 * outreach messages or an earlier message of a thread (by `In-Reply-To` and
 * `References`, and a bounce report's returned Message-ID), else the latest
 * thread with the same sender and subject — always within the companies the
 * message may belong to, so a forged `In-Reply-To` naming another company's
 * message joins nothing of theirs. It is classified, then stored once per
 * company (by Message-ID) with its effects, in groups (`InboundCommit.ts`).
 */

export type { Destination }

/** How many messages of a batch are looked up at once. */
const prepareConcurrency = 16

export type IngestOutcome =
  | { readonly _tag: "Stored"; readonly companyId: string; readonly threadId: string; readonly classification: Classification }
  | { readonly _tag: "Duplicate"; readonly companyId: string }
  /** Nobody it may belong to: mail to the shared address that answers none of our messages. */
  | { readonly _tag: "Dropped"; readonly reason: string }

/** Our outreach Message-IDs are `<id@domain>` with the recipient's or execution's id (`src/outreach/messages/Delivery.ts`). */
const outreachId = (messageId: string) => /^<([a-z]{2,10}_[0-9a-f]{32,48})@[^<>]+>$/.exec(messageId)?.[1]

/** `Re: Fwd: AW: Hello` → `hello`: what a reply's subject is matched on. */
export const subjectKey = (subject: string) =>
  subject.replace(/^(\s*(re|fwd?|aw|sv|antw|wg|tr)\s*(\[\d+\])?\s*:\s*)+/i, "").trim().toLowerCase().slice(0, 500)

export class Ingestion extends Context.Service<Ingestion, {
  /** Takes in one raw message; fails with `UnreadableMail` (naming why) for what is too large or not a message. */
  readonly ingest: (raw: Buffer, destination: Destination) => Effect.Effect<IngestOutcome, UnreadableMail>
  /** Takes in one raw message, parsed once, for each of its destinations (SMTP recipients). */
  readonly ingestAll: (raw: Buffer, destinations: ReadonlyArray<Destination>) => Effect.Effect<ReadonlyArray<IngestOutcome>, UnreadableMail>
  /**
   * Takes in parsed messages, each for its destinations, stored in one transaction that also runs `alongside`
   * (rolled back when it fails); answers each message's outcomes.
   */
  readonly storeBatch: <E>(
    mails: ReadonlyArray<{ readonly mail: InboundMail; readonly destinations: ReadonlyArray<Destination> }>,
    alongside: Effect.Effect<void, E>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<IngestOutcome>>, E>
}>()("inbox/Ingestion") {
  static readonly layer = Layer.effect(Ingestion, Effect.gen(function*() {
    const config = yield* InboxConfig
    const threads = yield* ThreadsRepo
    const companies = yield* CompaniesRepo
    const senders = yield* OutreachSenders
    const inboundCommit = yield* makeInboundCommit
    const modelContext = yield* Effect.context<Credits | Llm | ModelCatalog>()

    /** The outreach message of ours that `references` name, sent by one of `allowed` (any company when undefined). */
    const answeredMessage = (references: ReadonlyArray<string>, allowed: ReadonlyArray<string> | undefined) =>
      Effect.gen(function*() {
        for (const reference of references) {
          const id = outreachId(reference)
          if (id === undefined) continue
          const found = yield* findMessage(senders, id)
          if (Option.isSome(found) && found.value.messageId === reference && (allowed === undefined || allowed.includes(found.value.companyId))) {
            return found
          }
        }
        return Option.none<TrackedMessage>()
      })

    /** The outreach message of tracking id `id`, sent by one of `allowed`. */
    const outreachMessage = (id: string, allowed: ReadonlyArray<string>) =>
      Effect.map(findMessage(senders, id), Option.filter((message) => allowed.includes(message.companyId)))

    const outreachOf = (thread: ThreadRecord) => {
      const id = thread.campaignRecipientId ?? thread.sequenceExecutionId
      return id === null ? Effect.succeedNone : outreachMessage(id, [thread.companyId])
    }

    const newThread = (companyId: string, mailboxId: string | null, mail: InboundMail, contact: string, answered: Option.Option<TrackedMessage>, now: Date): ThreadRecord => ({
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

    /** The company a message goes to when nothing it names is ours: the one company it may be for, else none. */
    const companyOf = (answered: Option.Option<TrackedMessage>, allowed: ReadonlyArray<string> | undefined, references: ReadonlyArray<string>) =>
      Option.isSome(answered) ? Effect.succeed(answered.value.companyId)
        : allowed?.length === 1 ? Effect.succeed(allowed[0]!)
        : Effect.map(threads.byMessageIds(allowed, references), (thread) => Option.isSome(thread) ? thread.value.companyId : undefined)

    /** The message, parsed; `UnreadableMail` (naming why) for what is too large or not a message. */
    const read = (raw: Buffer) =>
      raw.length > config.inboundMaxBytes
        ? Effect.fail(new UnreadableMail({ message: `Message too large: ${raw.length} bytes, at most ${config.inboundMaxBytes}` }))
        : readInbound(raw)

    /** Where the message goes and what it is, ready to store; or why nothing is stored. */
    const prepare = (mail: InboundMail, destination: Destination) =>
      Effect.gen(function*() {
        const allowed = destination.companies?.map((entry) => entry.companyId)
        let answered = yield* answeredMessage(mail.references, allowed)
        // A reply address names the message even when the replier's client dropped the threading headers.
        if (Option.isNone(answered) && destination.answers !== undefined && allowed !== undefined) {
          answered = yield* outreachMessage(destination.answers, allowed)
        }
        const companyId = yield* companyOf(answered, allowed, mail.references)
        if (companyId === undefined) {
          return { _tag: "Dropped", reason: allowed === undefined ? "It answers no message of ours" : "It answers no message of the companies holding this address" } as const
        }
        const contact = Option.isSome(answered) ? answered.value.email : mail.bounce?.recipient ?? mail.from
        const { thread, duplicate } = yield* threads.locate(companyId, {
          threadId: allowed?.length === 1 ? destination.threadId : undefined,
          messageIds: mail.references,
          contactKey: contact.toLowerCase(),
          subjectKey: subjectKey(mail.subject),
          messageId: mail.messageId
        })
        if (duplicate) return { _tag: "Duplicate", companyId } as const
        if (Option.isNone(answered) && Option.isSome(thread)) answered = yield* outreachOf(thread.value)
        const now = yield* currentDate
        const payer = Effect.map(companies.get(companyId), Option.map((company) => ({ organizationId: company.organizationId, companyId, userId: null })))
        const classification = yield* Effect.provideContext(classify(mail, payer), modelContext)
        const mailboxId = destination.companies?.find((entry) => entry.companyId === companyId)?.mailboxId ?? null
        const created = Option.isSome(thread) ? undefined : newThread(companyId, mailboxId, mail, contact, answered, now)
        const threadId = Option.isSome(thread) ? thread.value.id : created!.id
        const message = {
          id: newId("msg"),
          companyId,
          threadId,
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
        } as const
        return { _tag: "Ready", ready: { message, created, contact, mail, answered, now } } as const
      })

    /** The outcome of a prepared message once stored (`stored`: it was new). */
    const outcomeOf = (ready: ReadyMessage, stored: boolean): IngestOutcome =>
      stored
        ? { _tag: "Stored", companyId: ready.message.companyId, threadId: ready.message.threadId, classification: ready.message.classification }
        : { _tag: "Duplicate", companyId: ready.message.companyId }

    const take = (mail: InboundMail, destination: Destination) =>
      Effect.flatMap(prepare(mail, destination), (prepared) =>
        prepared._tag !== "Ready" ? Effect.succeed(prepared) : Effect.map(inboundCommit.store(prepared.ready), (stored) => outcomeOf(prepared.ready, stored)))

    return {
      ingest: (raw, destination) => Effect.flatMap(read(raw), (mail) => take(mail, destination)),
      ingestAll: (raw, destinations) => Effect.flatMap(read(raw), (mail) => Effect.forEach(destinations, (destination) => take(mail, destination))),
      storeBatch: (mails, alongside) =>
        Effect.gen(function*() {
          // Lookups of the batch's messages overlap (pipelined on PostgreSQL); then one transaction stores them all.
          const prepared = yield* Effect.forEach(mails, ({ mail, destinations }) =>
            Effect.forEach(destinations, (destination) => prepare(mail, destination)), { concurrency: prepareConcurrency })
          const ready = prepared.flat().flatMap((entry) => (entry._tag === "Ready" ? [entry.ready] : []))
          const stored = yield* inboundCommit.commit(ready, alongside)
          return prepared.map((outcomes) => outcomes.map((entry) => entry._tag === "Ready" ? outcomeOf(entry.ready, stored.has(entry.ready)) : entry))
        })
    }
  }))
}
