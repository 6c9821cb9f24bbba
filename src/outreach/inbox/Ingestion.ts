import { Context, Effect, Layer } from "effect"
import { makeInboundCommit, type ReadyMessage } from "./InboundCommit.ts"
import type { InboundMail } from "./InboundMail.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { type IngestOutcome, makeThreading } from "./Threading.ts"

/**
 * Taking in inbound messages, what the inbound queue's worker does with every
 * message inbound SMTP accepted and the IMAP poller fetched: parsed messages
 * threaded (`Threading.ts`), classified, then stored once per company (by
 * Message-ID) with their effects, a batch in one transaction (`InboundCommit.ts`).
 */

export type { Destination, IngestOutcome }

export class Ingestion extends Context.Service<Ingestion, {
  /**
   * Takes in parsed messages, each for its destinations, threaded together and stored in one transaction that also
   * runs `alongside` (rolled back when it fails); answers each message's outcomes.
   */
  readonly storeBatch: <E>(
    mails: ReadonlyArray<{ readonly mail: InboundMail; readonly destinations: ReadonlyArray<Destination> }>,
    alongside: Effect.Effect<void, E>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<IngestOutcome>>, E>
}>()("inbox/Ingestion") {
  static readonly layer = Layer.effect(Ingestion, Effect.gen(function*() {
    const inboundCommit = yield* makeInboundCommit
    const { prepareAll } = yield* makeThreading

    /** The outcome of a prepared message once stored (`stored`: it was new). */
    const outcomeOf = (ready: ReadyMessage, stored: boolean): IngestOutcome =>
      stored
        ? { _tag: "Stored", companyId: ready.message.companyId, threadId: ready.message.threadId, classification: ready.message.classification }
        : { _tag: "Duplicate", companyId: ready.message.companyId }

    return {
      storeBatch: (mails, alongside) =>
        Effect.gen(function*() {
          const arrivals = mails.flatMap(({ destinations, mail }) => destinations.map((destination) => ({ mail, destination })))
          const prepared = yield* prepareAll(arrivals)
          const stored = yield* inboundCommit.commit(prepared.flatMap((entry) => (entry._tag === "Ready" ? [entry.ready] : [])), alongside)
          const outcomes = prepared.map((entry) => (entry._tag === "Ready" ? outcomeOf(entry.ready, stored.has(entry.ready)) : entry))
          let next = 0
          return mails.map(({ destinations }) => destinations.map(() => outcomes[next++]!))
        })
    }
  }))
}
