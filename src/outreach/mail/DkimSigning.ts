import { Effect, Redacted, Result } from "effect"
import type { SendMailOptions } from "nodemailer"
import type { MimeNodeEnvelope } from "nodemailer/lib/mime-node"
import type { KeyObject } from "node:crypto"
import { makeWorkerPool, siblingModule } from "../../platform/WorkerPool.ts"
import { groupCommit } from "../../storage/GroupCommit.ts"
import type { DkimSettings } from "./MailConfig.ts"

/** A message and the key to sign it with, as a signing thread gets them. */
export interface SigningJob {
  readonly options: SendMailOptions
  readonly domain: string
  readonly selector: string
  readonly privateKey: KeyObject
}

/** The signed message and its envelope, or why it could not be signed. */
export type SigningReply =
  | { readonly raw: Uint8Array; readonly envelope: MimeNodeEnvelope }
  | { readonly refused: string }

/**
 * One thread: building the message, the canonicalisation, the hashing and
 * the RSA-2048 signature run on the other core while the request thread goes
 * on with the next messages (one thread signs ~1,200 messages a second here).
 */
const signingThreads = 1
/**
 * The messages waiting when the thread is free go to it together: one
 * hand-over (a wake-up of the thread, a reply) per batch instead of per message.
 */
const batchSize = 64
/** With a 128 MB heap and V8's default young generation, the thread spent half its time collecting garbage. */
const signingMemoryMb = 256
const signingYoungGenerationMb = 64
const signingTimeoutMs = 30_000

const threadFailures = { timeout: "timed out", "out-of-memory": "ran out of memory", crashed: "crashed" } as const

/**
 * Signs messages with DKIM off the request thread: each message is built
 * (nodemailer's composer) and signed on a signing thread, and answered as
 * nodemailer options carrying the signed message as `raw` with its envelope.
 * The thread starts with the first signed message and ends when idle (`WorkerPool`).
 */
export const makeDkimSigner = Effect.gen(function*() {
  const run = yield* makeWorkerPool<ReadonlyArray<SigningJob>, ReadonlyArray<SigningReply>>({
    file: siblingModule(import.meta.url, "DkimWorker"),
    workers: signingThreads,
    memoryMb: signingMemoryMb,
    timeoutMs: signingTimeoutMs,
    youngGenerationMb: signingYoungGenerationMb
  })
  // The messages that arrive while the thread signs go to it together once it is done (a group commit's grouping).
  const signed = groupCommit(
    (jobs: ReadonlyArray<SigningJob>) =>
      Effect.catchTag(run(jobs), "WorkerFailed", (failed) =>
        Effect.succeed(jobs.map((): SigningReply => ({ refused: `the signing thread ${threadFailures[failed.reason]}` })))),
    batchSize
  )

  return (options: SendMailOptions, key: DkimSettings): Effect.Effect<Result.Result<SendMailOptions, string>> =>
    signed({ options, domain: key.domain, selector: key.selector, privateKey: Redacted.value(key.privateKey) }).pipe(
      Effect.map((reply) =>
        "refused" in reply
          ? Result.fail(`DKIM signing failed: ${reply.refused}`)
          : Result.succeed<SendMailOptions>({
            envelope: reply.envelope,
            raw: Buffer.from(reply.raw.buffer, reply.raw.byteOffset, reply.raw.byteLength),
            messageId: options.messageId
          })
      )
    )
})
