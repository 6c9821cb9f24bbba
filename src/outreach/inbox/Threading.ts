import { Effect, Option } from "effect"
import { CompaniesRepo } from "../../accounts/companies/CompaniesRepo.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import { newId } from "../../platform/Ids.ts"
import { currentDate } from "../../platform/Time.ts"
import { findMessages, OutreachSenders, type TrackedMessage } from "../messages/Outreach.ts"
import { classify } from "./Classifier.ts"
import type { ReadyMessage } from "./InboundCommit.ts"
import type { InboundMail } from "./InboundMail.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Where inbound messages go, for many at once with a few statements in all
 * (not a few per message): each joins the thread of what it answers — one of
 * our outreach messages or an earlier message of a thread (by `In-Reply-To`
 * and `References`, and a bounce report's returned Message-ID), else the
 * latest thread with the same sender and subject — always within the
 * companies the message may belong to, so a forged `In-Reply-To` naming
 * another company's message joins nothing of theirs. Messages prepared
 * together see each other: a reply to an earlier one, or another message of
 * its new conversation, joins its thread, and a second copy is a duplicate.
 */

/** A message ready to store, or why nothing is stored. */
export type Prepared =
  | { readonly _tag: "Ready"; readonly ready: ReadyMessage }
  | { readonly _tag: "Duplicate" }
  /** Nobody it may belong to: mail to the shared address that answers none of our messages. */
  | { readonly _tag: "Dropped"; readonly reason: string }

/** A message and one place it arrived at. */
export interface Arrival {
  readonly mail: InboundMail
  readonly destination: Destination
}

/** How many per-message lookups (a company by Message-ID, a billed classification) run at once. */
const concurrency = 16

/** Our outreach Message-IDs are `<id@domain>` with the recipient's or execution's id (`src/outreach/messages/Delivery.ts`). */
const outreachId = (messageId: string) => /^<([a-z]{2,10}_[0-9a-f]{32,48})@[^<>]+>$/.exec(messageId)?.[1]

/** `Re: Fwd: AW: Hello` → `hello`: what a reply's subject is matched on. */
export const subjectKey = (subject: string) =>
  subject.replace(/^(\s*(re|fwd?|aw|sv|antw|wg|tr)\s*(\[\d+\])?\s*:\s*)+/i, "").trim().toLowerCase().slice(0, 500)

const originOf = (answered: Option.Option<TrackedMessage>) => {
  const message = Option.getOrUndefined(answered)
  const campaign = message !== undefined && "campaignId" in message.origin ? message.origin.campaignId : null
  const sequence = message !== undefined && "sequenceId" in message.origin ? message.origin.sequenceId : null
  return {
    campaignId: campaign,
    campaignRecipientId: campaign === null ? null : message!.id,
    sequenceId: sequence,
    sequenceExecutionId: sequence === null ? null : message!.id
  }
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
  ...originOf(answered),
  messageCount: 0,
  lastMessageAt: now,
  createdAt: now,
  updatedAt: now
})

export const makeThreading = Effect.gen(function*() {
  const threads = yield* ThreadsRepo
  const companies = yield* CompaniesRepo
  const senders = yield* OutreachSenders
  const modelContext = yield* Effect.context<Credits | Llm | ModelCatalog>()

  /** The outreach message of ours among `known` that `references` name, sent by one of `allowed` (any company when undefined). */
  const answeredIn = (known: ReadonlyMap<string, TrackedMessage>, references: ReadonlyArray<string>, allowed: ReadonlyArray<string> | undefined) => {
    for (const reference of references) {
      const found = known.get(outreachId(reference) ?? "")
      if (found !== undefined && found.messageId === reference && (allowed === undefined || allowed.includes(found.companyId))) return Option.some(found)
    }
    return Option.none<TrackedMessage>()
  }

  /** The company a message goes to when nothing it names is ours: the one company it may be for, else none. */
  const companyOf = (answered: Option.Option<TrackedMessage>, allowed: ReadonlyArray<string> | undefined, references: ReadonlyArray<string>) =>
    Option.isSome(answered) ? Effect.succeed(answered.value.companyId)
      : allowed?.length === 1 ? Effect.succeed(allowed[0]!)
      : Effect.map(threads.byMessageIds(allowed, references), (thread) => Option.isSome(thread) ? thread.value.companyId : undefined)

  /** Where each arrival goes and what it is; answers in the order given. */
  const prepareAll = (arrivals: ReadonlyArray<Arrival>) =>
    Effect.gen(function*() {
      const now = yield* currentDate
      // Every outreach message the arrivals name (threading headers, reply addresses): one lookup per sender.
      const named = yield* findMessages(senders, arrivals.flatMap(({ destination, mail }) => [
        ...mail.references.flatMap((reference) => outreachId(reference) ?? []),
        ...(destination.answers === undefined ? [] : [destination.answers])
      ]))
      const routed = yield* Effect.forEach(arrivals, ({ destination, mail }) => {
        const allowed = destination.companies?.map((entry) => entry.companyId)
        let answered = answeredIn(named, mail.references, allowed)
        // A reply address names the message even when the replier's client dropped the threading headers.
        if (Option.isNone(answered) && destination.answers !== undefined && allowed !== undefined) {
          answered = Option.filter(Option.fromNullishOr(named.get(destination.answers)), (message) => allowed.includes(message.companyId))
        }
        return Effect.map(companyOf(answered, allowed, mail.references), (companyId) => ({ destination, mail, allowed, answered, companyId }))
      }, { concurrency })
      const placed = routed.flatMap((entry) => (entry.companyId === undefined ? [] : [{ ...entry, companyId: entry.companyId }]))
      const contactOf = (entry: (typeof placed)[number]) => Option.isSome(entry.answered) ? entry.answered.value.email : entry.mail.bounce?.recipient ?? entry.mail.from
      // Threads and duplicates of every placed message: one statement.
      const located = yield* threads.locate(placed.map((entry) => ({
        companyId: entry.companyId,
        lookup: {
          threadId: entry.allowed?.length === 1 ? entry.destination.threadId : undefined,
          messageIds: entry.mail.references,
          contactKey: contactOf(entry).toLowerCase(),
          subjectKey: subjectKey(entry.mail.subject),
          messageId: entry.mail.messageId
        }
      })))
      // The outreach a found thread answers, for messages that name none of ours: one lookup per sender.
      const threadOutreach = yield* findMessages(senders, located.flatMap(({ thread }) =>
        Option.isSome(thread) ? [thread.value.campaignRecipientId ?? thread.value.sequenceExecutionId ?? ""] : []))
      const outreachOf = (thread: ThreadRecord) =>
        Option.filter(Option.fromNullishOr(threadOutreach.get(thread.campaignRecipientId ?? thread.sequenceExecutionId ?? "")), (message) => message.companyId === thread.companyId)

      // In order, so that each message sees the ones before it.
      const earlier = new Map<string, { readonly thread: ThreadRecord; readonly answered: Option.Option<TrackedMessage> }>()
      const byMessageId = (companyId: string, messageId: string) => `${companyId} ${messageId}`
      const bySubject = (companyId: string, contactKey: string, key: string) => `${companyId} ${contactKey} ${key}`
      const decided = placed.map((entry, index) => {
        const { duplicate, named: byName, thread: found } = located[index]!
        const seen = (key: string) => earlier.get(key)
        if (duplicate || seen(byMessageId(entry.companyId, entry.mail.messageId)) !== undefined) return { _tag: "Duplicate" } as const
        const contact = contactOf(entry)
        const subjectOf = bySubject(entry.companyId, contact.toLowerCase(), subjectKey(entry.mail.subject))
        const answering = byName ? undefined : entry.mail.references.map((reference) => seen(byMessageId(entry.companyId, reference))).find((hit) => hit !== undefined)
        const joined = answering ?? (Option.isSome(found) ? undefined : seen(subjectOf))
        const thread = joined?.thread ?? Option.getOrUndefined(found)
        const answered = Option.isSome(entry.answered) ? entry.answered
          : joined !== undefined ? joined.answered
          : thread !== undefined ? outreachOf(thread)
          : Option.none<TrackedMessage>()
        const mailboxId = entry.destination.companies?.find((company) => company.companyId === entry.companyId)?.mailboxId ?? null
        const created = thread === undefined ? newThread(entry.companyId, mailboxId, entry.mail, contact, answered, now) : undefined
        const decision = { _tag: "Placed", entry, contact, answered, thread: thread ?? created!, created } as const
        earlier.set(byMessageId(entry.companyId, entry.mail.messageId), decision)
        earlier.set(subjectOf, decision)
        return decision
      })
      const prepared = yield* Effect.forEach(decided, (decision): Effect.Effect<Prepared> => {
        if (decision._tag === "Duplicate") return Effect.succeed(decision)
        const { answered, contact, created, entry, thread } = decision
        const { companyId, mail } = entry
        const payer = Effect.map(companies.get(companyId), Option.map((company) => ({ organizationId: company.organizationId, companyId, userId: null })))
        return Effect.map(Effect.provideContext(classify(mail, payer), modelContext), (classification) => ({
          _tag: "Ready",
          ready: {
            message: {
              id: newId("msg"),
              companyId,
              threadId: thread.id,
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
            },
            created,
            contact,
            mail,
            answered,
            now
          }
        }))
      }, { concurrency })
      let next = 0
      return routed.map((entry): Prepared => entry.companyId === undefined
        ? { _tag: "Dropped", reason: entry.allowed === undefined ? "It answers no message of ours" : "It answers no message of the companies holding this address" }
        : prepared[next++]!)
    })

  return { prepareAll }
})
