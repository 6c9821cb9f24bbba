import { Effect, Option } from "effect"
import type { OutreachSender, TrackedMessage } from "../messages/Outreach.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/** Sequences as an outreach sender: a tracking id is an execution's; an unsubscribed contact leaves every sequence, one who replied those that stop on reply. */
export const sequencesSender = Effect.gen(function*() {
  const repo = yield* SequencesRepo
  return {
    idPrefix: "sqx_",
    message: (id) =>
      Effect.map(repo.execution(id), Option.map((execution): TrackedMessage => ({
        id: execution.id,
        companyId: execution.companyId,
        email: execution.email,
        fields: execution.fields,
        sequenceId: execution.sequenceId,
        source: Effect.succeed(Option.some({ subject: execution.subject ?? "", html: execution.body ?? "" })),
        track: (event, now) => repo.track(id, event, now),
        messageId: execution.messageId,
        origin: { sequenceId: execution.sequenceId },
        replied: (now) => repo.mark(id, "replied", now),
        // A hard bounce put the address on the suppression list: the contact leaves every sequence.
        bounced: (hard, now) =>
          Effect.andThen(repo.mark(id, "bounced", now), hard ? repo.leave(execution.companyId, execution.email, "The address bounced", now) : Effect.void)
      }))),
    unsubscribed: (companyId, email, now) =>
      Effect.asVoid(repo.leave(companyId, email, "The contact unsubscribed", now)),
    contactReplied: (companyId, email, now) => Effect.asVoid(repo.leaveOnReply(companyId, email, now))
  } satisfies OutreachSender
})
