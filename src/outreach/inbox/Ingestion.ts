import { Context, Effect, Layer } from "effect"
import { makeInboundCommit } from "./InboundCommit.ts"
import type { InboundMail } from "./InboundMail.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { makeThreading } from "./Threading.ts"

/**
 * Taking in inbound messages, what the inbound queue's worker does with every
 * message inbound SMTP accepted and the IMAP poller fetched: parsed messages
 * threaded (`Threading.ts`), classified, then stored once per company (by
 * Message-ID) with their effects, a batch in one transaction (`InboundCommit.ts`).
 */


export class Ingestion extends Context.Service<Ingestion, {
  /**
   * Takes in parsed messages, each for its destinations, threaded together and stored in one transaction that also
   * runs `alongside` (rolled back when it fails); answers why each message that belongs to nobody was dropped.
   */
  readonly storeBatch: <E>(
    mails: ReadonlyArray<{ readonly mail: InboundMail; readonly destinations: ReadonlyArray<Destination> }>,
    alongside: Effect.Effect<void, E>
  ) => Effect.Effect<ReadonlyArray<string>, E>
}>()("inbox/Ingestion") {
  static readonly layer = Layer.effect(Ingestion, Effect.gen(function*() {
    const inboundCommit = yield* makeInboundCommit
    const { prepareAll } = yield* makeThreading

    return {
      storeBatch: (mails, alongside) =>
        Effect.gen(function*() {
          const arrivals = mails.flatMap(({ destinations, mail }) => destinations.map((destination) => ({ mail, destination })))
          const prepared = yield* prepareAll(arrivals)
          yield* inboundCommit.commit(prepared.flatMap((entry) => (entry._tag === "Ready" ? [entry.ready] : [])), alongside)
          return prepared.flatMap((entry) => (entry._tag === "Dropped" ? [entry.reason] : []))
        })
    }
  }))
}
