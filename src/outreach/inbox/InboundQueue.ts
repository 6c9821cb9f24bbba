import { Cause, Context, Effect, Exit, Layer, Queue } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { pollForever, whileLeased } from "../../platform/LeasedWork.ts"
import { currentDate } from "../../platform/Time.ts"
import { groupCommit } from "../../storage/GroupCommit.ts"
import { readInbound } from "./InboundMail.ts"
import { type Destination, InboundQueueRepo, type QueueClaim, type QueuedMessage } from "./InboundQueueRepo.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { Ingestion } from "./Ingestion.ts"

/**
 * Accept, then process — what mail servers do. Inbound SMTP hands each
 * message to `accept`, which stores it raw (group-committed across SMTP
 * sessions: one statement per group) and resumes only once it is durable, so
 * an acknowledged message is never lost. The IMAP poller hands each message it
 * fetched to `acceptWith`, which stores it in one transaction with the
 * mailbox's UID checkpoint. A leased worker then claims batches
 * of stored messages, parses them, and takes them in through the one
 * ingestion path: the batch's messages, their effects and their removal from
 * the queue commit in one transaction, so each is processed exactly once
 * across crashes (an uncommitted batch stays, its lease expires, another
 * claim takes it) and across processes (a claim is exclusive). A message that
 * cannot be read is quarantined with why; a batch that fails is retried one
 * message at a time, and a message that failed `maxAttempts` times is
 * quarantined, so one bad message never holds others back.
 */

/** Messages claimed per batch. */
const batchSize = 64
/** Messages stored per acceptance group. */
const maxGroup = 64
/** Claims of one message before it is quarantined. */
const maxAttempts = 5

export class InboundQueue extends Context.Service<InboundQueue, {
  /** Stores an accepted message durably (with the messages accepted meanwhile); resumes once it committed. */
  readonly accept: (raw: Buffer, destinations: ReadonlyArray<Destination>) => Effect.Effect<void>
  /** Stores a message and runs `alongside` in one transaction (rolled back when `alongside` fails); resumes once it committed. */
  readonly acceptWith: <E>(raw: Buffer, destinations: ReadonlyArray<Destination>, alongside: Effect.Effect<void, E>) => Effect.Effect<void, E>
  /** Claims and processes one batch; answers how many messages it claimed. */
  readonly processBatch: Effect.Effect<number>
  /** Processes batches until none is left that nobody holds. */
  readonly processPending: Effect.Effect<void>
  /** Succeeds once a message was accepted here since the last time it did. */
  readonly accepted: Effect.Effect<void>
}>()("inbox/InboundQueue") {
  static readonly layer = Layer.effect(InboundQueue, Effect.gen(function*() {
    const config = yield* InboxConfig
    const sql = yield* SqlClient.SqlClient
    const repo = yield* InboundQueueRepo
    const ingestion = yield* Ingestion
    const arrivals = yield* Queue.dropping<void>(1)
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    const accept = groupCommit((group: ReadonlyArray<{ readonly raw: Buffer; readonly destinations: ReadonlyArray<Destination> }>) =>
      Effect.gen(function*() {
        yield* repo.enqueue(group, yield* currentDate)
        yield* Queue.offer(arrivals, undefined)
        return group.map(() => undefined)
      }), maxGroup)

    /** Stores `messages` of the claim and settles them in one transaction: the readable ones processed, the others quarantined. */
    const storeClaimed = (token: string, messages: ReadonlyArray<QueuedMessage>) =>
      Effect.gen(function*() {
        const readable: Array<QueuedMessage & { readonly mail: Effect.Success<ReturnType<typeof readInbound>> }> = []
        const quarantined: Array<readonly [string, string]> = []
        for (const message of messages) {
          if (message.attempts > maxAttempts) {
            quarantined.push([message.id, `Processing failed ${maxAttempts} times`])
            continue
          }
          const read = yield* Effect.result(readInbound(message.raw))
          if (read._tag === "Failure") quarantined.push([message.id, read.failure.message])
          else readable.push({ ...message, mail: read.success })
        }
        const dropped = yield* ingestion.storeBatch(readable, repo.settle(token, readable.map((message) => message.id), quarantined))
        for (const [id, reason] of quarantined) yield* Effect.logWarning("Inbound message quarantined", { id, reason })
        for (const reason of dropped) yield* Effect.logInfo("Inbound message dropped", { reason })
      })

    /** The claim's messages together; when that fails (not for a lost lease), each alone, so one bad message holds none of the others back. */
    const processClaim = (claim: QueueClaim) =>
      Effect.gen(function*() {
        const together = yield* Effect.exit(storeClaimed(claim.token, claim.messages))
        if (Exit.isSuccess(together) || claim.messages.length === 1 || Cause.hasFails(together.cause)) return yield* together
        yield* Effect.logWarning("Inbound batch failed; processing its messages one by one", Cause.pretty(together.cause))
        for (const message of claim.messages) {
          const alone = yield* Effect.exit(storeClaimed(claim.token, [message]))
          if (Exit.isFailure(alone)) yield* Effect.logError("Inbound message failed; it is retried after its lease", { id: message.id }, alone.cause)
        }
      })

    const processBatch = Effect.gen(function*() {
      const now = yield* currentDate
      const claim = yield* repo.claim(now, leaseUntil(now), batchSize)
      if (claim.messages.length === 0) return 0
      const renew = Effect.flatMap(currentDate, (at) => repo.renew(claim.token, leaseUntil(at)))
      yield* whileLeased(claim.token, config.leaseMs, renew)(processClaim(claim)).pipe(
        Effect.catchTag("LeaseLost", () => Effect.logWarning("Inbound batch's lease was taken over; its messages are processed by the new holder")))
      return claim.messages.length
    })

    const processPending: Effect.Effect<void> = Effect.flatMap(processBatch, (claimed) => (claimed === 0 ? Effect.void : processPending))

    return {
      accept: (raw, destinations) => accept({ raw, destinations }),
      acceptWith: (raw, destinations, alongside) =>
        sql.withTransaction(Effect.andThen(Effect.flatMap(currentDate, (now) => repo.enqueue([{ raw, destinations }], now)), alongside)).pipe(
          Effect.catchIf(SqlError.isSqlError, Effect.die),
          Effect.andThen(Queue.offer(arrivals, undefined))
        ),
      processBatch,
      processPending,
      accepted: Queue.take(arrivals)
    }
  }))

  /** The worker, unless `INBOX_WORKER=off`: a batch as soon as mail was accepted here, else every `INBOX_POLL_MS` (what other processes left). */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* InboxConfig
    if (!config.pollerEnabled) return
    const queue = yield* InboundQueue
    yield* pollForever({ name: "Inbound queue", poll: queue.processBatch, batch: batchSize, pollMs: config.pollMs, wake: queue.accepted })
  }))
}
