import { Deferred, Effect, Exit, Redacted, Result, Semaphore } from "effect"
import type { SendMailOptions } from "nodemailer"
import MailComposer from "nodemailer/lib/mail-composer"
import type { KeyObject } from "node:crypto"
import { makeWorkerPool, siblingModule, type WorkerFailed } from "../../platform/WorkerPool.ts"
import type { DkimSettings } from "./MailConfig.ts"

/** A built message and the key to sign it with, as a signing thread gets them. */
export interface SigningJob {
  readonly raw: Uint8Array
  readonly domain: string
  readonly selector: string
  readonly privateKey: KeyObject
}

/** The DKIM-Signature header (with its CRLF) to put in front of the message, or why the key could not sign. */
export type SigningReply = { readonly header: string } | { readonly refused: string }

/**
 * Two threads: the RSA-2048 signature (and the canonicalisation and hashing
 * before it) runs on the other core while the request thread goes on with
 * the next messages.
 */
const signingThreads = 2
/**
 * The messages waiting when a thread is free go to it together: one hand-over
 * (a wake-up of the thread, a reply) per batch instead of per message.
 */
const batchSize = 32
const signingMemoryMb = 128
const signingTimeoutMs = 30_000

const threadFailures = { timeout: "timed out", "out-of-memory": "ran out of memory", crashed: "crashed" } as const

/**
 * Signs messages with DKIM off the request thread: each message is built
 * here (nodemailer's composer), signed on a signing thread, and answered as
 * nodemailer options carrying the signed message as `raw` with its envelope.
 * Threads start with the first signed message.
 */
export const makeDkimSigner = Effect.gen(function*() {
  const run = yield* makeWorkerPool<ReadonlyArray<SigningJob>, ReadonlyArray<SigningReply>>({
    file: siblingModule(import.meta.url, "DkimWorker"),
    workers: signingThreads,
    memoryMb: signingMemoryMb,
    timeoutMs: signingTimeoutMs
  })
  const scope = yield* Effect.scope
  const threads = yield* Semaphore.make(signingThreads)
  const waiting: Array<{ readonly job: SigningJob; readonly signed: Deferred.Deferred<SigningReply, WorkerFailed> }> = []

  /** Once a thread is free: what waits then (if anything), to it. */
  const handOver = threads.withPermits(1)(Effect.suspend(() => {
    const batch = waiting.splice(0, batchSize)
    if (batch.length === 0) return Effect.void
    return Effect.flatMap(
      Effect.exit(run(batch.map(({ job }) => job))),
      (replies) => Effect.forEach(batch, ({ signed }, at) => Deferred.done(signed, Exit.map(replies, (all) => all[at]!)), { discard: true })
    )
  }))

  const signed = (job: SigningJob) =>
    Effect.gen(function*() {
      const signed = yield* Deferred.make<SigningReply, WorkerFailed>()
      waiting.push({ job, signed })
      yield* Effect.forkIn(handOver, scope)
      return yield* Deferred.await(signed)
    })

  return (options: SendMailOptions, key: DkimSettings): Effect.Effect<Result.Result<SendMailOptions, string>> =>
    Effect.gen(function*() {
      // Composing throws on some bad input (as in nodemailer's own sendMail): a failure to read, not a crash.
      const { message, raw } = yield* Effect.tryPromise(async () => {
        const message = new MailComposer(options).compile()
        return { message, raw: await message.build() }
      })
      // A copy of just the message: the built Buffer is a view into a 64 KB slab, which would be copied whole.
      const reply = yield* signed({ raw: new Uint8Array(raw), domain: key.domain, selector: key.selector, privateKey: Redacted.value(key.privateKey) })
      if ("refused" in reply) return Result.fail(`DKIM signing failed: ${reply.refused}`)
      const signedRaw = Buffer.concat([Buffer.from(reply.header, "latin1"), raw])
      return Result.succeed<SendMailOptions>({ envelope: message.getEnvelope(), raw: signedRaw, messageId: options.messageId })
    }).pipe(
      Effect.catchTags({
        UnknownError: (failed) => Effect.succeed(Result.fail(`The message could not be built: ${String(failed.cause)}`)),
        WorkerFailed: (failed) => Effect.succeed(Result.fail(`DKIM signing failed: the signing thread ${threadFailures[failed.reason]}`))
      })
    )
})
