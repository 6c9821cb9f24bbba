import { Effect, Option } from "effect"
import type { OutreachSender, TrackedMessage } from "../messages/Outreach.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/** Sequences as an outreach sender: a tracking id is an execution's; an unsubscribed contact leaves every sequence, one who replied those that stop on reply. */
export const sequencesSender = Effect.gen(function*() {
  const repo = yield* SequencesRepo
  return {
    idPrefix: "sqx_",
    messages: (ids) =>
      Effect.map(repo.executionsAmong(ids), (found) => found.map((execution): TrackedMessage => ({
        id: execution.id,
        companyId: execution.companyId,
        email: execution.email,
        fields: execution.fields,
        sequenceId: execution.sequenceId,
        source: Effect.succeed(Option.some({ subject: execution.subject ?? "", html: execution.body ?? "" })),
        track: (event, now) => repo.track(execution.id, event, now),
        messageId: execution.messageId,
        origin: { sequenceId: execution.sequenceId },
        // A hard bounce put the address on the suppression list: the contact leaves every sequence.
        bounced: (hard, now) =>
          Effect.andThen(repo.mark([execution.id], "bounced", now), hard ? repo.leave(execution.companyId, execution.email, "The address bounced", now) : Effect.void)
      }))),
    replied: (ids, now) => repo.mark(ids, "replied", now),
    unsubscribed: (companyId, email, now) =>
      Effect.asVoid(repo.leave(companyId, email, "The contact unsubscribed", now)),
    contactsReplied: (contacts, now) => Effect.asVoid(repo.leaveOnReply(contacts, now))
  } satisfies OutreachSender
})
