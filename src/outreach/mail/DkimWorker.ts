import { Effect } from "effect"
import DKIM from "nodemailer/lib/dkim"
import { buffer } from "node:stream/consumers"
import { answerJobs } from "../../platform/WorkerPool.ts"
import type { SigningJob, SigningReply } from "./DkimSigning.ts"

/**
 * The body of a DKIM signing thread: nodemailer's signer over each built
 * message of a batch (relaxed/relaxed, rsa-sha256), answering only the header it puts in
 * front, so that the message itself is not copied back.
 */
const sign = async ({ raw, domain, selector, privateKey }: SigningJob): Promise<SigningReply> => {
  // A Buffer arrives as a plain Uint8Array; nodemailer's signer takes a Buffer.
  const message = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  const signed = await buffer(new DKIM({ domainName: domain, keySelector: selector, privateKey }).sign(message))
  const header = signed.subarray(0, signed.length - message.length).toString("latin1")
  // nodemailer leaves a message unsigned when its key cannot sign; such a message must not go out.
  return header.startsWith("DKIM-Signature:") ? { header } : { refused: `the key of ${domain} could not sign the message` }
}

answerJobs((jobs: ReadonlyArray<SigningJob>) =>
  Effect.promise(async () => {
    const replies: Array<SigningReply> = []
    for (const job of jobs) replies.push(await sign(job))
    return replies
  })
)
