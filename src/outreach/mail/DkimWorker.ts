import { Effect } from "effect"
import DKIM from "nodemailer/lib/dkim"
import { buffer } from "node:stream/consumers"
import { answerJobs } from "../../platform/WorkerPool.ts"
import type { SigningJob, SigningReply } from "./DkimSigning.ts"
import { builtMessage } from "./Composing.ts"

/**
 * The body of a DKIM signing thread: each message of a batch built by
 * nodemailer's composer and signed by nodemailer's signer (relaxed/relaxed,
 * rsa-sha256), answered whole with its envelope.
 */
const sign = async ({ options, domain, selector, privateKey }: SigningJob): Promise<SigningReply> => {
  const { raw, envelope } = await builtMessage(options)
  const signed = await buffer(new DKIM({ domainName: domain, keySelector: selector, privateKey }).sign(raw))
  // nodemailer leaves a message unsigned when its key cannot sign; such a message must not go out.
  if (!signed.subarray(0, 15).equals(signatureStart)) return { refused: `the key of ${domain} could not sign the message` }
  // A copy of just the message: the Buffer is a view into a larger slab, which would be copied whole.
  return { raw: new Uint8Array(signed), envelope }
}

const signatureStart = Buffer.from("DKIM-Signature:")

answerJobs((jobs: ReadonlyArray<SigningJob>) =>
  Effect.promise(async () => {
    const replies: Array<SigningReply> = []
    for (const job of jobs) {
      // Composing throws on some bad input (as in nodemailer's own sendMail): that message's failure, not the batch's.
      replies.push(await sign(job).catch((error: unknown) => ({ refused: `the message could not be built: ${String(error)}` })))
    }
    return replies
  })
)
