import { Clock, Context, Duration, Effect, Layer, Option, Redacted, Ref, Result } from "effect"
import nodemailer, { type SendMailOptions } from "nodemailer"
import { mkdir, rename, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { AppConfig } from "../../platform/AppConfig.ts"
import { builtMessage } from "./Composing.ts"
import { makeDkimSigner } from "./DkimSigning.ts"
import { type DkimSettings, MailConfig } from "./MailConfig.ts"
import { failureOutcome, type OutgoingMessage, type SendOutcome, toMailOptions } from "./Message.ts"

/**
 * Outgoing e-mail. One `send` per message and recipient, answering a typed
 * outcome (never failing). Two backends: SMTP through nodemailer's pooled
 * transport when `SMTP_URL` is set; otherwise every message is written as a
 * real .eml file under `DATA_DIR/outbox/`, so a fresh machine sends nothing
 * yet shows every message. Both sign with DKIM: with the message's own key
 * (its sender's verified domain, `OutgoingMessage.dkim`), else with `DKIM_*`
 * when configured, on a signing thread (`DkimSigning.ts`); and
 * both keep to `MAIL_RATE_PER_SECOND`. Settings in docs/mail.md.
 */
export interface MailerService {
  readonly backend: "smtp" | "outbox"
  readonly send: (message: OutgoingMessage) => Effect.Effect<SendOutcome>
  /**
   * As `send`, but `start` runs once the pacing allows the message, right
   * before the transport gets it (a sender records it as in flight there);
   * when `start` answers false nothing is sent and the answer is none.
   */
  readonly sendStarting: (message: OutgoingMessage, start: Effect.Effect<boolean>) => Effect.Effect<Option.Option<SendOutcome>>
}

export interface MailSettings {
  readonly from: string
  readonly ratePerSecond: number
  readonly dkim: Option.Option<DkimSettings>
}

export interface SmtpSettings extends MailSettings {
  /** smtp://user:pass@host:port or smtps://… */
  readonly url: Redacted.Redacted
  readonly poolSize: number
}

/** Spaces sends `1 / rate` seconds apart across every fiber of the process; a rate of 0 does not wait. */
export const pacer = (ratePerSecond: number) =>
  Effect.gen(function*() {
    if (ratePerSecond <= 0) return Effect.void
    const interval = 1000 / ratePerSecond
    const nextSlot = yield* Ref.make(0)
    return Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const slot = yield* Ref.modify(nextSlot, (next) => {
        const at = Math.max(now, next)
        return [at, at + interval] as const
      })
      if (slot > now) yield* Effect.sleep(Duration.millis(slot - now))
    })
  })

/**
 * The message built whole (as `raw`, with its envelope) for a transport to write in one piece; why not, when
 * the composer refuses it (as nodemailer's own `sendMail` would).
 */
const built = (options: SendMailOptions): Effect.Effect<Result.Result<SendMailOptions, string>> =>
  Effect.promise(() =>
    builtMessage(options).then(
      ({ raw, envelope }) => Result.succeed<SendMailOptions>({ envelope, raw, messageId: options.messageId }),
      (error: unknown) => Result.fail(`the message could not be built: ${String(error)}`)
    )
  )

/**
 * A mailer over a nodemailer transport: paced, the message built whole and
 * signed with its key or the configured one (before `start`, so that the
 * transport gets the message at once), and every failure read as an outcome.
 */
const mailerOver = <Info>(
  backend: MailerService["backend"],
  settings: MailSettings,
  deliver: (options: ReturnType<typeof toMailOptions>) => Promise<Info>,
  accepted: (info: Info) => string
) =>
  Effect.gen(function*() {
    const pace = yield* pacer(settings.ratePerSecond)
    const sign = yield* makeDkimSigner
    const sendStarting = (message: OutgoingMessage, start: Effect.Effect<boolean>) =>
      Effect.gen(function*() {
        yield* pace
        const composed = toMailOptions(message, settings.from)
        const key = message.dkim ?? Option.getOrUndefined(settings.dkim)
        const options = key === undefined ? yield* built(composed.options) : yield* sign(composed.options, key)
        if (!(yield* start)) return Option.none<SendOutcome>()
        if (Result.isFailure(options)) {
          return Option.some<SendOutcome>({ _tag: "TemporaryFailure", messageId: composed.messageId, code: null, response: options.failure })
        }
        const prepared = { options: options.success, messageId: composed.messageId }
        return yield* Effect.tryPromise(() => deliver(prepared)).pipe(
          Effect.map((info): SendOutcome => ({ _tag: "Accepted", messageId: prepared.messageId, response: accepted(info) })),
          Effect.catch((error) => Effect.succeed(failureOutcome(prepared.messageId, error.cause))),
          Effect.map(Option.some)
        )
      })
    return {
      backend,
      sendStarting,
      send: (message) => Effect.map(sendStarting(message, Effect.succeed(true)), Option.getOrThrow)
    } satisfies MailerService
  })

/** File name of a message in the outbox: sortable by time, unique by Message-ID. */
const outboxName = (messageId: string, now: Date) =>
  `${now.toISOString().replace(/[:.]/g, "-")}-${messageId.replace(/[^A-Za-z0-9@._-]/g, "")}.eml`

export class Mailer extends Context.Service<Mailer, MailerService>()("mail/Mailer") {
  /** SMTP through a pool of `poolSize` connections, closed with the layer. */
  static readonly smtp = (settings: SmtpSettings) =>
    Layer.effect(Mailer, Effect.gen(function*() {
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          nodemailer.createTransport({
            pool: true,
            url: Redacted.value(settings.url),
            maxConnections: settings.poolSize,
            maxMessages: 1_000,
            connectionTimeout: 30_000,
            greetingTimeout: 30_000,
            socketTimeout: 60_000
          })
        ),
        (transport) => Effect.sync(() => transport.close())
      )
      return yield* mailerOver("smtp", settings, ({ options }) => transport.sendMail(options), (info) => info.response)
    }))

  /** Every message as an .eml file in `directory` (written whole, then renamed into place). */
  static readonly outbox = (directory: string, settings: MailSettings) =>
    Layer.effect(Mailer, Effect.gen(function*() {
      const folder = resolve(directory)
      const transport = nodemailer.createTransport({
        streamTransport: true,
        buffer: true,
        newline: "windows"
      })
      return yield* mailerOver("outbox", settings, async ({ options, messageId }) => {
        const info = await transport.sendMail(options)
        await mkdir(folder, { recursive: true })
        const path = join(folder, outboxName(messageId, new Date()))
        await writeFile(`${path}.tmp`, info.message)
        await rename(`${path}.tmp`, path)
        return path
      }, (path) => `written to ${path}`)
    }))

  /** SMTP when `SMTP_URL` is set, else the outbox under `DATA_DIR`. */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const { dataDir } = yield* AppConfig
    const config = yield* MailConfig
    const settings: MailSettings = { from: config.from, ratePerSecond: config.ratePerSecond, dkim: config.dkim }
    return Option.match(config.smtpUrl, {
      onNone: () => Mailer.outbox(join(dataDir, "outbox"), settings),
      onSome: (url) => Mailer.smtp({ ...settings, url, poolSize: config.poolSize })
    })
  }))
}
