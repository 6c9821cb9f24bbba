import { Context, Effect, Layer } from "effect"
import { makeInboundCommit, type ReadyMessage } from "./InboundCommit.ts"
import { type InboundMail, readInbound, UnreadableMail } from "./InboundMail.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { type IngestOutcome, makeThreading } from "./Threading.ts"

/**
 * Taking in inbound messages — the one path the IMAP poller and the inbound
 * queue (what inbound SMTP accepted) share: parsed, threaded
 * (`Threading.ts`), classified, then stored once per company (by
 * Message-ID) with their effects, in groups (`InboundCommit.ts`).
 */

export type { Destination, IngestOutcome }

export class Ingestion extends Context.Service<Ingestion, {
  /** Takes in one raw message; fails with `UnreadableMail` (naming why) for what is too large or not a message. */
  readonly ingest: (raw: Buffer, destination: Destination) => Effect.Effect<IngestOutcome, UnreadableMail>
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
    const config = yield* InboxConfig
    const inboundCommit = yield* makeInboundCommit
    const { prepareAll } = yield* makeThreading

    /** The outcome of a prepared message once stored (`stored`: it was new). */
    const outcomeOf = (ready: ReadyMessage, stored: boolean): IngestOutcome =>
      stored
        ? { _tag: "Stored", companyId: ready.message.companyId, threadId: ready.message.threadId, classification: ready.message.classification }
        : { _tag: "Duplicate", companyId: ready.message.companyId }

    /** The message, parsed; `UnreadableMail` (naming why) for what is too large or not a message. */
    const read = (raw: Buffer) =>
      raw.length > config.inboundMaxBytes
        ? Effect.fail(new UnreadableMail({ message: `Message too large: ${raw.length} bytes, at most ${config.inboundMaxBytes}` }))
        : readInbound(raw)

    return {
      ingest: (raw, destination) =>
        Effect.gen(function*() {
          const [prepared] = yield* prepareAll([{ mail: yield* read(raw), destination }])
          if (prepared!._tag !== "Ready") return prepared!
          return outcomeOf(prepared!.ready, yield* inboundCommit.store(prepared!.ready))
        }),
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
