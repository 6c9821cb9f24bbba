import { NodeServices } from "@effect/platform-node"
import { Context, Duration, Effect, Layer, Option, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { connect } from "node:net"
import MailComposer from "nodemailer/lib/mail-composer"
import { ContentConfig } from "./ContentConfig.ts"

/**
 * SpamAssassin's opinion of an e-mail, as one more metric of the spam check
 * when it is configured: a `spamd` (`SPAMASSASSIN_URL=spamd://host:783`,
 * spoken to with the spamc protocol's REPORT command) or the `spamassassin`
 * program (`SPAMASSASSIN_COMMAND`, run with local tests only and no Bayes).
 * The e-mail is wrapped in the message a sender would send (From, To, Date,
 * Message-ID, a plain-text alternative beside HTML) so that only its content
 * is judged. Failures are logged and the rules answer alone.
 */

export interface SpamAssassinRule {
  readonly name: string
  readonly points: number
  readonly description: string
}

export interface SpamAssassinReport {
  /** SpamAssassin's score: 5 or more is spam by its default threshold. */
  readonly score: number
  readonly required: number
  /** The rules that fired, highest points first. */
  readonly rules: ReadonlyArray<SpamAssassinRule>
}

export interface MessageParts {
  readonly subject: string | undefined
  readonly content: string
  readonly isHtml: boolean
  /** The visible text, sent as the plain-text alternative of HTML content. */
  readonly text: string
}

/** A check's time limit (SpamAssassin's own rules take well under a second on 500 KB). */
const checkTimeout = Duration.seconds(20)
/** The most of spamd's answer read: a report is a few kilobytes. */
const maxAnswerBytes = 1024 * 1024

/** The message SpamAssassin reads: fixed neutral envelope headers around the e-mail under test. */
const messageOf = (parts: MessageParts): Promise<Buffer> =>
  new MailComposer({
    from: "Sender <sender@example.com>",
    to: "Recipient <recipient@example.com>",
    subject: parts.subject ?? "",
    date: new Date(),
    messageId: `<${crypto.randomUUID()}@example.com>`,
    ...(parts.isHtml ? { html: parts.content, text: parts.text } : { text: parts.content })
  }).compile().build()

/**
 * Reads SpamAssassin's report ("Content analysis details: (20.4 points, 5.0
 * required)" and its table of rules), the same from spamd and the program.
 */
const parseReport = (report: string): SpamAssassinReport | undefined => {
  const totals = /Content analysis details:\s*\((-?\d+(?:\.\d+)?) points?, (-?\d+(?:\.\d+)?) required\)/.exec(report)
  if (totals === null) return undefined
  const rules = [...report.slice(totals.index).matchAll(/^\s*(-?\d+(?:\.\d+)?)\s+([A-Z][A-Z0-9_]+)\s+(.*)$/gm)]
    .map((match) => ({ points: Number(match[1]), name: match[2]!, description: match[3]!.trim() }))
    .filter((rule) => rule.points !== 0)
    .sort((a, b) => b.points - a.points)
  return { score: Number(totals[1]), required: Number(totals[2]), rules }
}

/** One REPORT request to spamd (the spamc protocol 1.5): the message out, the report back. */
const askSpamd = (host: string, port: number, message: Buffer) =>
  Effect.callback<string, Error>((resume) => {
    const socket = connect({ host, port })
    const answer: Array<Buffer> = []
    let size = 0
    socket.on("connect", () => {
      socket.write(`REPORT SPAMC/1.5\r\nContent-length: ${message.length}\r\n\r\n`)
      socket.end(message)
    })
    socket.on("data", (data: Buffer) => {
      size += data.length
      if (size > maxAnswerBytes) socket.destroy(new Error("spamd answered more than 1 MB"))
      else answer.push(data)
    })
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.on("end", () => resume(Effect.succeed(Buffer.concat(answer).toString("utf8"))))
    return Effect.sync(() => socket.destroy())
  })

/** `spamassassin -L -t`: local tests only, the report appended to the message it echoes. */
const runProgram = (command: string, message: Buffer) =>
  Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    return yield* spawner.string(
      ChildProcess.make(command, ["-L", "-t", "--cf=use_bayes 0", "--cf=bayes_auto_learn 0"], {
        stdin: { stream: Stream.make(new Uint8Array(message)) }
      })
    )
  }).pipe(Effect.provide(NodeServices.layer))

const spamdAddress = (url: string) => {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: parsed.port === "" ? 783 : Number(parsed.port) }
}

export class SpamAssassin extends Context.Service<SpamAssassin, {
  /** SpamAssassin's report on the e-mail; `None` when SpamAssassin is not configured or did not answer. */
  readonly check: (parts: MessageParts) => Effect.Effect<Option.Option<SpamAssassinReport>>
}>()("content/SpamAssassin") {
  static readonly layer = Layer.effect(SpamAssassin, Effect.gen(function*() {
    const { spamAssassinUrl, spamAssassinCommand } = yield* ContentConfig
    const ask = Option.match(spamAssassinUrl, {
      onSome: (url) => {
        const { host, port } = spamdAddress(url)
        return Option.some((message: Buffer) => askSpamd(host, port, message))
      },
      onNone: () => Option.map(spamAssassinCommand, (command) => (message: Buffer) => runProgram(command, message))
    })
    return {
      check: (parts: MessageParts) =>
        Option.match(ask, {
          onNone: () => Effect.succeed(Option.none<SpamAssassinReport>()),
          onSome: (run) =>
            Effect.tryPromise(() => messageOf(parts)).pipe(
              Effect.flatMap(run),
              Effect.timeout(checkTimeout),
              Effect.map((answer) => Option.fromUndefinedOr(parseReport(answer))),
              Effect.tap((report) => Option.isNone(report) ? Effect.logWarning("SpamAssassin gave no report; the rules answer alone") : Effect.void),
              Effect.catch((error) =>
                Effect.as(Effect.logWarning("SpamAssassin check failed; the rules answer alone", { error: String(error) }), Option.none<SpamAssassinReport>())
              )
            )
        })
    }
  }))
}
