import { Effect, Option } from "effect"
import type { OutreachSender, TrackedMessage } from "../outreach/Outreach.ts"
import { SequencesRepo } from "./SequencesRepo.ts"

/** Sequences as an outreach sender: a tracking id is an execution's; an unsubscribed contact leaves every sequence. */
export const sequencesSender = Effect.gen(function*() {
  const repo = yield* SequencesRepo
  return {
    message: (id) =>
      Effect.map(repo.execution(id), Option.map((execution): TrackedMessage => ({
        id: execution.id,
        companyId: execution.companyId,
        email: execution.email,
        fields: execution.fields,
        sequenceId: execution.sequenceId,
        source: Effect.succeed(Option.some({ subject: execution.subject ?? "", html: execution.body ?? "" })),
        track: (event, now) => repo.track(id, event, now)
      }))),
    unsubscribed: (companyId, email, now) =>
      Effect.asVoid(repo.leave(companyId, email, "The contact unsubscribed", now))
  } satisfies OutreachSender
})
