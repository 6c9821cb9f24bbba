import { Effect, Option } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { type LeadEvent, Leads } from "../leads/Leads.ts"
import { Suppressions } from "../lists/Suppressions.ts"
import { OutreachSenders, repliedTo, type TrackedMessage } from "../messages/Outreach.ts"
import { outboxOn } from "../../storage/Outbox.ts"
import type { InboundMail } from "./InboundMail.ts"
import { type MessageRecord, type ThreadRecord, ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Inbound messages stored in groups, in one transaction per group: a batch
 * the inbound queue's worker claimed (`commit`), committed with the batch's
 * removal from the queue. A group stores each message with its thread (new
 * ones made with it), then the effects of those that were new — every lead
 * event of the group in one record — then the threads naming their leads and
 * the webhook events. A message already stored (another delivery of it)
 * changes nothing.
 */

/** A parsed, threaded and classified message, with what its storing does. */
export interface ReadyMessage {
  readonly message: MessageRecord & { readonly classification: NonNullable<MessageRecord["classification"]> }
  /** The thread to make with it; undefined: it joins `message.threadId`. */
  readonly created: ThreadRecord | undefined
  readonly contact: string
  readonly mail: InboundMail
  /** Our outreach message it answers, if any. */
  readonly answered: Option.Option<TrackedMessage>
  readonly now: Date
}

/** The replies of a group: the outreach messages answered, and who wrote back to which company. */
interface Replies {
  readonly answered: Array<TrackedMessage>
  readonly contacts: Array<{ readonly companyId: string; readonly email: string }>
}

export const makeInboundCommit = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const outbox = outboxOn(sql)
  const threads = yield* ThreadsRepo
  const suppressions = yield* Suppressions
  const senders = yield* OutreachSenders
  const leads = yield* Leads

  /**
   * What a new inbound message does to the outreach it answers, and the events
   * of the contact's lead it makes: a bounce marks the message and (hard)
   * suppresses; an unsubscribe request suppresses; a person's reply counts,
   * stops sequences, and moves the lead (`replied`, or `interested` /
   * `not_interested` as classified). Replies are only gathered into `replies`,
   * told to the senders once per group.
   */
  const effects = ({ message, contact, mail, answered, now }: ReadyMessage, replies: Replies) =>
    Effect.gen(function*() {
      const { companyId, classification } = message
      const event = {
        companyId,
        at: now,
        contact: { email: contact },
        threadId: message.threadId,
        ...(Option.isSome(answered) ? answered.value.origin : {}),
        detail: { classification, subject: mail.subject }
      }
      if (mail.bounce !== undefined) {
        if (mail.bounce.hard) yield* suppressions.add(companyId, contact, "hard_bounce")
        if (Option.isSome(answered)) yield* answered.value.bounced(mail.bounce.hard, now)
        return mail.bounce.hard ? [{ ...event, type: "bounced", detail: { status: mail.bounce.status, diagnostic: mail.bounce.diagnostic } } as const] : []
      }
      if (classification === "unsubscribe") {
        yield* suppressions.add(companyId, contact, "unsubscribed")
        yield* Effect.forEach(senders, (sender) => sender.unsubscribed(companyId, contact, now), { discard: true })
        return [{ ...event, type: "unsubscribed" } as const]
      }
      // What a machine sent (an absence notice, a delay report) is no reply.
      if (mail.automatic || classification === "out_of_office" || classification === "bounce") return []
      if (Option.isSome(answered)) replies.answered.push(answered.value)
      replies.contacts.push({ companyId, email: contact })
      const status = classification === "interested" || classification === "not_interested" ? classification : undefined
      return [{ ...event, type: "replied", status } as const]
    })

  /** Stores a group, and runs `alongside`, in one transaction (rolled back when `alongside` fails). */
  const commit = <E>(group: ReadonlyArray<ReadyMessage>, alongside: Effect.Effect<void, E>) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* alongside
      if (group.length === 0) return
      const threadsOf = yield* threads.addMessages(group)
      const stored = group.flatMap((ready) => {
        const thread = threadsOf.get(ready.message.id)
        return thread === undefined ? [] : [[ready, thread] as const]
      })
      const events: Array<LeadEvent> = []
      const replies: Replies = { answered: [], contacts: [] }
      for (const [ready] of stored) events.push(...(yield* effects(ready, replies)))
      const now = group[0]!.now
      yield* repliedTo(senders, replies.answered, now)
      yield* Effect.forEach(senders, (sender) => sender.contactsReplied(replies.contacts, now), { discard: true })
      yield* leads.record(events)
      const linked = yield* threads.linkLeads(stored.flatMap(([, thread]) => (thread.leadId === null ? [thread.id] : [])))
      yield* outbox.emitAll(stored.map(([{ message, mail, answered }, thread]) => ({
        companyId: message.companyId,
        type: "inbox.reply_received" as const,
        payload: {
          threadId: thread.id,
          messageId: message.id,
          from: mail.from,
          subject: mail.subject,
          classification: message.classification,
          automatic: mail.automatic,
          leadId: thread.leadId ?? linked.get(thread.id) ?? null,
          ...(Option.isSome(answered) ? answered.value.origin : {}),
          receivedAt: message.receivedAt.toISOString()
        }
      })))
    })).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die))

  return {
    /** Stores `group` with its effects and runs `alongside` in one transaction. */
    commit
  }
}) satisfies Effect.Effect<unknown, never, SqlClient.SqlClient | ThreadsRepo | Suppressions | OutreachSenders | Leads>
