import { Config, Context, Effect, Layer, Option, Schema } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** The content tools' settings (docs/content.md, README). */
export interface ContentSettings {
  /** `CONTENT_WORKERS`: worker threads for the content tools' analysis and rewriting. */
  readonly workers: number
  /** `SPAMASSASSIN_URL`: a spamd whose score joins the spam check (`spamd://host:783`). */
  readonly spamAssassinUrl: Option.Option<string>
  /** `SPAMASSASSIN_COMMAND`: the `spamassassin` program, run per spam check when no spamd is configured. */
  readonly spamAssassinCommand: Option.Option<string>
}

export const contentDefaults: ContentSettings = {
  workers: 2,
  spamAssassinUrl: Option.none(),
  spamAssassinCommand: Option.none()
}

const SpamdUrl = Schema.String.check(
  Schema.isPattern(/^spamd:\/\/[^\s/:]+(:\d{1,5})?\/?$/, { message: "must be a spamd://host[:port] URL" })
)

export class ContentConfig extends Context.Service<ContentConfig, ContentSettings>()("content/ContentConfig") {
  static readonly fromEnv = Config.all({
    workers: positiveInt("CONTENT_WORKERS", contentDefaults.workers),
    spamAssassinUrl: Config.option(Config.schema(SpamdUrl, "SPAMASSASSIN_URL")),
    spamAssassinCommand: Config.option(Config.NonEmptyString("SPAMASSASSIN_COMMAND"))
  })

  static readonly layer = Layer.effect(ContentConfig, Effect.orDie(ContentConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<ContentSettings> = {}) =>
    Layer.succeed(ContentConfig, { ...contentDefaults, ...overrides })
}
