import { Effect } from "effect"
import nodemailer from "nodemailer"
import { failureOutcome, type SendOutcome, type toMailOptions } from "../mail/Message.ts"
import { makeAddressPolicy, OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { passwordContext } from "./Mailboxes.ts"
import type { MailboxRecord } from "./MailboxesRepo.ts"

/** Through the mailbox's own SMTP server; its host resolved and checked by the outbound policy, the connection made to that address. */
export const sendThroughMailbox = (mailbox: MailboxRecord, options: ReturnType<typeof toMailOptions>) =>
  Effect.gen(function*() {
    const box = yield* SecretBox
    const policy = makeAddressPolicy(yield* OutboundConfig)
    const opened = yield* Effect.result(box.open(mailbox.smtpPassword, passwordContext(mailbox.id, "smtp")))
    if (opened._tag === "Failure") return failureOutcome(options.messageId, new Error(`The mailbox's SMTP password: ${opened.failure.message}`))
    const password = opened.success
    return yield* Effect.tryPromise(async () => {
      const host = mailbox.smtp.host.replace(/^\[|\]$/g, "")
      const [address] = await policy.resolve(host)
      const transport = nodemailer.createTransport({
        host: address!.address,
        port: mailbox.smtp.port,
        secure: mailbox.smtp.secure,
        auth: { user: mailbox.smtp.user, pass: password },
        tls: { servername: host },
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        socketTimeout: 30_000
      })
      try {
        const info = await transport.sendMail(options.options)
        return { _tag: "Accepted", messageId: options.messageId, response: info.response } satisfies SendOutcome
      } finally {
        transport.close()
      }
    }).pipe(Effect.catch((error) => Effect.succeed(failureOutcome(options.messageId, error.cause))))
  })
