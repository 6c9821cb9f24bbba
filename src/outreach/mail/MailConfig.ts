import { Config, Context, Effect, Layer, Option, Redacted, Schema, SchemaIssue } from "effect"
import { createPrivateKey, type KeyObject } from "node:crypto"

/** How this process sends e-mail (docs/mail.md, README). */
export interface OutgoingMailSettings {
  /** `SMTP_URL`: smtp:// or smtps:// with credentials; none: every message goes to `DATA_DIR/outbox/` as an .eml file. */
  readonly smtpUrl: Option.Option<Redacted.Redacted>
  /** `MAIL_FROM`: the default sender, `Name <address>` or an address. */
  readonly from: string
  /** `MAIL_RATE_PER_SECOND`: messages per second this process hands to the mail server; 0: no limit. */
  readonly ratePerSecond: number
  /** `MAIL_POOL_SIZE`: pooled SMTP connections. */
  readonly poolSize: number
  /** `DKIM_DOMAIN`, `DKIM_SELECTOR`, `DKIM_PRIVATE_KEY`: DKIM signing of every outgoing message, when all three are given. */
  readonly dkim: Option.Option<DkimSettings>
}

export interface DkimSettings {
  readonly domain: string
  readonly selector: string
  /** Parsed once: parsing a PEM key costs about as much as the signature itself. */
  readonly privateKey: Redacted.Redacted<KeyObject>
}

const configError = (message: string) => new Schema.SchemaError(new SchemaIssue.InvalidValue({ message }))

const dkimFromEnv = Config.all({
  domain: Config.option(Config.String("DKIM_DOMAIN")),
  selector: Config.option(Config.String("DKIM_SELECTOR")),
  privateKey: Config.option(Config.Redacted("DKIM_PRIVATE_KEY"))
}).pipe(Config.flatMap(({ domain, selector, privateKey }): Config.Config<Option.Option<DkimSettings>> => {
  if (Option.isSome(domain) && Option.isSome(selector) && Option.isSome(privateKey)) {
    // A PEM key in one environment line may carry its line breaks as "\n".
    const pem = Redacted.value(privateKey.value).replaceAll("\\n", "\n")
    try {
      const key = Redacted.make(createPrivateKey(pem))
      return Config.succeed(Option.some({ domain: domain.value, selector: selector.value, privateKey: key }))
    } catch {
      return Config.fail(configError("DKIM_PRIVATE_KEY must be a PEM private key"))
    }
  }
  if (Option.isNone(domain) && Option.isNone(selector) && Option.isNone(privateKey)) return Config.succeed(Option.none())
  return Config.fail(configError("DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY go together: set all three or none"))
}))

const SmtpUrl = Schema.String.check(
  Schema.isPattern(/^smtps?:\/\/[^\s]+$/, { message: "must be an smtp:// or smtps:// URL" })
)

export const mailDefaults: OutgoingMailSettings = {
  smtpUrl: Option.none(),
  from: "Platform <no-reply@localhost>",
  ratePerSecond: 0,
  poolSize: 5,
  dkim: Option.none()
}

export class MailConfig extends Context.Service<MailConfig, OutgoingMailSettings>()("mail/MailConfig") {
  static readonly fromEnv = Config.all({
    smtpUrl: Config.option(Config.schema(SmtpUrl, "SMTP_URL").pipe(Config.map(Redacted.make))),
    from: Config.String("MAIL_FROM").pipe(Config.withDefault(mailDefaults.from)),
    ratePerSecond: Config.Int("MAIL_RATE_PER_SECOND").pipe(Config.withDefault(mailDefaults.ratePerSecond)),
    poolSize: Config.Int("MAIL_POOL_SIZE").pipe(Config.withDefault(mailDefaults.poolSize)),
    dkim: dkimFromEnv
  })

  static readonly layer = Layer.effect(MailConfig, Effect.orDie(MailConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<OutgoingMailSettings> = {}) =>
    Layer.succeed(MailConfig, { ...mailDefaults, ...overrides })
}
