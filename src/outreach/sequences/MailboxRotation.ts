import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type DailySlot, type MailboxRecord, MailboxesRepo } from "../inbox/MailboxesRepo.ts"
import { sendThroughMailbox } from "../inbox/MailboxSmtp.ts"
import { senderOf, toMailOptions } from "../mail/Message.ts"
import type { MailRoute } from "../messages/Delivery.ts"
import type { OutboundConfig } from "../../platform/OutboundPolicy.ts"
import type { SecretBox } from "../../platform/Secrets.ts"
import type { Context } from "effect"
import type { ExecutionRecord, SequenceRecord } from "./SequenceRecords.ts"

/**
 * Sending a sequence through the company's mailboxes (docs/sequences.md):
 * each send takes one of today's sends from the least-used mailbox under its
 * `dailyLimit`, in the transaction that marks the execution in flight, so
 * limits hold exactly across workers and processes. Days are UTC days.
 */

/** `YYYY-MM-DD` of `now` in UTC: the day a mailbox's daily limit counts. */
export const utcDay = (now: Date) => now.toISOString().slice(0, 10)

/** Midnight UTC after `now`: when a mailbox's count starts again. */
export const nextUtcDay = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1))

export const mailboxesFullReason = "Every mailbox of the sequence reached its daily limit: sent the next day (UTC)"
export const mailboxesGoneError = "None of the sequence's mailboxes exists any more"

class LeaseLost extends Data.TaggedError("LeaseLost") {}

export type MailboxStart = DailySlot | { readonly _tag: "Lost" }

/**
 * Takes today's send for `execution` and marks it in flight through the
 * mailbox (`begin`), both or neither. The contact keeps the mailbox of its
 * earlier steps while that is still one of the sequence's (a thread stays in
 * one mailbox): at its limit the send waits for the next day rather than
 * switching. `Lost`: the lease was gone, nothing was taken.
 */
export const startThroughMailbox = (
  execution: ExecutionRecord,
  sequence: SequenceRecord,
  begin: (mailboxId: string) => Effect.Effect<boolean>,
  now: Date
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mailboxes = yield* MailboxesRepo
    const day = utcDay(now)
    const earlier = execution.mailboxId
    return yield* sql.withTransaction(Effect.gen(function*() {
      const kept: DailySlot = earlier !== null && sequence.mailboxIds.includes(earlier)
        ? yield* mailboxes.takeDailySlot(sequence.companyId, [earlier], day)
        : { _tag: "Gone" }
      const slot = kept._tag === "Gone" ? yield* mailboxes.takeDailySlot(sequence.companyId, sequence.mailboxIds, day) : kept
      if (slot._tag !== "Taken") return slot
      if (!(yield* begin(slot.mailbox.id))) return yield* new LeaseLost()
      return slot
    })).pipe(
      Effect.catchTag("LeaseLost", () => Effect.succeed<MailboxStart>({ _tag: "Lost" })),
      Effect.orDie
    )
  })

/** Out through the mailbox's own SMTP server, from its address, with its display name (else the sequence's `fromName`). */
export const mailboxRoute = (
  mailbox: MailboxRecord,
  sequence: SequenceRecord,
  mailFrom: string,
  context: Context.Context<SecretBox | OutboundConfig>
): MailRoute => {
  const from = senderOf({ fromName: mailbox.displayName ?? sequence.fromName, fromEmail: mailbox.email }, mailFrom)
  return { from, send: (message) => Effect.provideContext(sendThroughMailbox(mailbox, toMailOptions(message, from)), context) }
}
