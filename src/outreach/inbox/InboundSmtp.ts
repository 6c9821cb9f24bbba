import { Context, Effect, Layer, Option, type Scope } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server"
import { addressOf } from "../mail/Message.ts"
import { MailConfig } from "../mail/MailConfig.ts"
import { findMessage, OutreachSenders } from "../messages/Outreach.ts"
import { OutreachConfig } from "../messages/OutreachConfig.ts"
import { isIssued, replyTokenOf } from "../messages/ReplyAddresses.ts"
import { TrackingSecret } from "../messages/TrackingSecret.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { hasHeaders } from "./InboundMail.ts"
import { InboundQueue } from "./InboundQueue.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { MailboxesRepo } from "./MailboxesRepo.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"
import { DomainsRepo } from "../domains/DomainsRepo.ts"

/**
 * Inbound SMTP (`smtp-server`) on `INBOUND_SMTP_PORT`: the service's own MX
 * for replies. It accepts mail to the shared `MAIL_FROM` address (which
 * belongs to whichever company's message it answers), to a mailbox's
 * address (that mailbox's company), to any address of a verified sending
 * domain (the companies that verified it) and to a reply address the platform
 * issued (`INBOUND_REPLY_DOMAIN`: the company and message it was issued for);
 * every other recipient is refused (550), a forged reply address too.
 * A message over `INBOUND_MAX_BYTES` is refused (552), one that does not
 * begin with a header is refused naming why (550 5.6.0). What is accepted is
 * stored raw and acknowledged (250) once that committed; the inbound queue
 * processes it through the one ingestion path, once per destination.
 */

/** SMTP failure with its reply code, as smtp-server sends it. */
const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code })

export interface InboundServer {
  readonly port: number
}

export class InboundSmtp extends Context.Service<InboundSmtp, {
  /** Listens for the scope on `port` (0: any free one) at `host`. */
  readonly listen: (port: number, host: string) => Effect.Effect<InboundServer, Error, Scope.Scope>
}>()("inbox/InboundSmtp") {
  static readonly layer = Layer.effect(InboundSmtp, Effect.gen(function*() {
    const config = yield* InboxConfig
    const mail = yield* MailConfig
    const mailboxes = yield* MailboxesRepo
    const domains = yield* DomainsRepo
    const queue = yield* InboundQueue
    const run = Effect.runPromiseWith(yield* Effect.context<never>())
    const shared = addressOf(mail.from).toLowerCase()
    const { replyDomain } = yield* OutreachConfig
    const { key: trackingKey } = yield* TrackingSecret
    const senders = yield* OutreachSenders
    const threads = yield* ThreadsRepo

    /** A reply address's company and the message or thread it was issued for; none when it is not one the platform issued. */
    const issuedReplyAddress = (localPart: string) =>
      Effect.gen(function*() {
        const token = replyTokenOf(localPart)
        if (token === undefined) return Option.none<Destination>()
        const message = yield* findMessage(senders, token.id)
        if (Option.isSome(message)) {
          if (!isIssued(trackingKey, message.value.companyId, token)) return Option.none<Destination>()
          return Option.some<Destination>({ companies: [{ companyId: message.value.companyId, mailboxId: null }], answers: message.value.id })
        }
        // An answer sent from the inbox names its thread, which the reply joins even without threading headers.
        const thread = yield* threads.named(token.id)
        if (Option.isNone(thread) || !isIssued(trackingKey, thread.value.companyId, token)) return Option.none<Destination>()
        return Option.some<Destination>({ companies: [{ companyId: thread.value.companyId, mailboxId: null }], threadId: thread.value.id })
      })

    /**
     * The destinations of each mail transaction, keyed by its envelope: smtp-server gives every transaction of a
     * connection a new envelope but keeps one session, so a message never goes to an earlier message's recipients.
     */
    const destinations = new WeakMap<SMTPServerSession["envelope"], Array<Destination>>()

    /** Where mail to `address` goes; none: not ours. */
    const destinationOf = (address: string) =>
      Effect.gen(function*() {
        const key = address.toLowerCase()
        if (key === shared) return Option.some<Destination>({ companies: undefined })
        const at = key.lastIndexOf("@")
        // The reply domain takes issued reply addresses only.
        if (Option.isSome(replyDomain) && key.slice(at + 1) === replyDomain.value) return yield* issuedReplyAddress(key.slice(0, at))
        const holders = yield* mailboxes.byAddress(key)
        if (holders.length > 0) {
          return Option.some<Destination>({ companies: holders.map((box) => ({ companyId: box.companyId, mailboxId: box.id })) })
        }
        // Any address of a domain a company verified is that company's (every company that verified it).
        const owners = yield* domains.verifiedBy(key.slice(at + 1))
        if (owners.length === 0) return Option.none<Destination>()
        return Option.some<Destination>({ companies: owners.map((companyId) => ({ companyId, mailboxId: null })) })
      })

    const readAll = (stream: SMTPServerDataStream) =>
      new Promise<Buffer | undefined>((resolve, reject) => {
        const chunks: Array<Buffer> = []
        let size = 0
        stream.on("data", (chunk: Buffer) => {
          size += chunk.length
          // Beyond the cap nothing more is kept; the stream is still read to its end, as SMTP requires.
          if (size <= config.inboundMaxBytes) chunks.push(chunk)
        })
        stream.on("end", () => resolve(stream.sizeExceeded || size > config.inboundMaxBytes ? undefined : Buffer.concat(chunks)))
        stream.on("error", reject)
      })

    return {
      listen: (port, host) =>
        Effect.gen(function*() {
          const server = new SMTPServer({
            secure: false,
            authOptional: true,
            disabledCommands: ["AUTH", "STARTTLS"],
            logger: false,
            banner: "Platform inbound mail",
            size: config.inboundMaxBytes,
            maxClients: 200,
            socketTimeout: 60_000,
            closeTimeout: 5_000,
            onRcptTo(address, session, callback) {
              run(destinationOf(address.address)).then((destination) => {
                if (Option.isNone(destination)) return callback(smtpError(550, `5.1.1 <${address.address}>: no such recipient here`))
                const listed = destinations.get(session.envelope)
                if (listed === undefined) destinations.set(session.envelope, [destination.value])
                else listed.push(destination.value)
                callback()
              }, () => callback(smtpError(451, "4.3.0 Temporary failure, try again later")))
            },
            onData(stream, session, callback) {
              readAll(stream).then(async (raw) => {
                if (raw === undefined) return callback(smtpError(552, `5.3.4 Message exceeds the maximum size of ${config.inboundMaxBytes} bytes`))
                if (!hasHeaders(raw)) return callback(smtpError(550, "5.6.0 Malformed message: no headers"))
                await run(queue.accept(raw, destinations.get(session.envelope) ?? []))
                callback(null, "Message accepted")
              }).catch((error: unknown) => {
                void run(Effect.logError("Inbound message failed", error))
                callback(smtpError(451, "4.3.0 Temporary failure, try again later"))
              })
            }
          })
          server.on("error", (error) => void run(Effect.logWarning("Inbound SMTP connection error", { error: error.message })))
          const bound = yield* Effect.acquireRelease(
            Effect.callback<number, Error>((resume) => {
              server.server.once("error", (error) => resume(Effect.fail(error)))
              server.listen(port, host, () => resume(Effect.succeed((server.server.address() as AddressInfo).port)))
            }),
            () => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
          )
          return { port: bound }
        })
    }
  }))

  /** With the reply domain from the environment and the tracking key that signs reply addresses. */
  static readonly live = InboundSmtp.layer.pipe(Layer.provide(TrackingSecret.layer.pipe(Layer.provideMerge(OutreachConfig.layer))))

  /** Inbound SMTP for the process's lifetime, when `INBOUND_SMTP_PORT` is set. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* InboxConfig
    const port = config.inboundSmtpPort
    if (Option.isNone(port)) return
    const server = yield* InboundSmtp.use((smtp) => smtp.listen(port.value, config.inboundSmtpHost)).pipe(Effect.orDie)
    yield* Effect.logInfo("Inbound SMTP listening", { port: server.port, host: config.inboundSmtpHost })
  }))
}
