import { Effect } from "effect"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/**
 * A real SMTP server (the `smtp-server` package) on loopback for the tests and
 * benchmarks, with a script for its answers. What it received is kept raw and
 * parsed on demand with a real MIME parser (`mailparser`).
 */

/** An SMTP refusal: a reply code (4xx temporary, 5xx permanent) and its text. */
export interface SmtpReply {
  readonly code: number
  readonly message: string
}

export interface SmtpServerScript {
  /** The answer to `RCPT TO` for the `attempt`-th try (1-based) of `address`; undefined accepts it. */
  readonly onRecipient?: (address: string, attempt: number) => SmtpReply | undefined
  /** The answer to the message data (after `DATA`); undefined accepts it. */
  readonly onData?: (raw: Buffer) => SmtpReply | undefined
  /** The only login it accepts (AUTH PLAIN/LOGIN, without TLS); mail without it is refused. None: no login needed. */
  readonly auth?: { readonly user: string; readonly pass: string }
}

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  /** The message exactly as it arrived. */
  readonly raw: Buffer
}

const refusal = (reply: SmtpReply) => Object.assign(new Error(reply.message), { responseCode: reply.code })

/** Starts the server for the scope; answers its `smtp://` URL and what it has received so far. */
export const smtpServer = (script: SmtpServerScript = {}) =>
  Effect.gen(function*() {
    const received: Array<ReceivedMail> = []
    const attempts = new Map<string, number>()
    const server = new SMTPServer({
      secure: false,
      authOptional: script.auth === undefined,
      allowInsecureAuth: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onAuth(auth, _session, callback) {
        const expected = script.auth
        if (expected !== undefined && auth.username === expected.user && auth.password === expected.pass) return callback(null, { user: auth.username })
        callback(new Error("Invalid username or password"))
      },
      size: 50 * 1024 * 1024,
      onRcptTo(address, _session, callback) {
        const attempt = (attempts.get(address.address) ?? 0) + 1
        attempts.set(address.address, attempt)
        const reply = script.onRecipient?.(address.address, attempt)
        callback(reply === undefined ? null : refusal(reply))
      },
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          const raw = Buffer.concat(chunks)
          const reply = script.onData?.(raw)
          if (reply !== undefined) return callback(refusal(reply))
          received.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            raw
          })
          callback(null)
        })
      }
    })
    const port = yield* Effect.acquireRelease(
      Effect.callback<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.server.address() as AddressInfo).port)))
      }),
      () => Effect.callback<void>((resume) => server.close(() => resume(Effect.void)))
    )
    return {
      url: `smtp://127.0.0.1:${port}`,
      /** The messages accepted so far, in arrival order. */
      received: Effect.sync((): ReadonlyArray<ReceivedMail> => [...received]),
      /** How many times `RCPT TO` named `address`. */
      attemptsFor: (address: string) => attempts.get(address) ?? 0
    }
  })

/** Parses a received message with `mailparser`: headers, the text and HTML parts, attachments. */
export const parseMail = (mail: ReceivedMail): Effect.Effect<ParsedMail> => Effect.promise(() => simpleParser(mail.raw))
