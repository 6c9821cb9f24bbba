import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { ModelEntry } from "../llm/Catalog.ts"

/** Every setting the service reads from its environment; README's table lists the same. */
export interface AppSettings {
  readonly host: string
  readonly port: number
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  readonly bootstrap: boolean
  readonly adminApiKey: Option.Option<Redacted.Redacted>
  readonly rateLimitPerMinute: number
  readonly maxBodyBytes: number
  readonly shutdownTimeoutMs: number
  readonly logLevel: "Trace" | "Debug" | "Info" | "Warn" | "Error"
  /** The model catalog (docs/gateway.md); none: each configured provider's defaults, or the local models. */
  readonly llmModels: Option.Option<ReadonlyArray<ModelEntry>>
  readonly openaiBaseUrl: Option.Option<string>
  readonly openaiApiKey: Option.Option<Redacted.Redacted>
  readonly anthropicBaseUrl: Option.Option<string>
  readonly anthropicApiKey: Option.Option<Redacted.Redacted>
  /** Bounds each model-provider attempt until its answer starts, and every silence of a stream. */
  readonly llmTimeoutMs: number
  /** Retries of a model-provider call after 429, 5xx or a network failure. */
  readonly llmMaxRetries: number
  /** Largest CSV file a contact-list import accepts. */
  readonly importMaxBytes: number
}

export class AppConfig extends Context.Service<AppConfig, AppSettings>()("platform/AppConfig") {
  static readonly fromEnv = Config.all({
    host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
    port: Config.Port("PORT").pipe(Config.withDefault(3000)),
    databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
    dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.data")),
    bootstrap: Config.Literals(["on", "off"], "BOOTSTRAP").pipe(
      Config.withDefault("on" as const),
      Config.map((value) => value === "on")
    ),
    adminApiKey: Config.option(Config.Redacted("ADMIN_API_KEY")),
    rateLimitPerMinute: Config.Int("RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(600)),
    maxBodyBytes: Config.Int("MAX_BODY_BYTES").pipe(Config.withDefault(1024 * 1024)),
    shutdownTimeoutMs: Config.Int("SHUTDOWN_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
    logLevel: Config.Literals(["Trace", "Debug", "Info", "Warn", "Error"], "LOG_LEVEL").pipe(
      Config.withDefault("Info" as const)
    ),
    llmModels: Config.option(Config.schema(Schema.fromJsonString(Schema.Array(ModelEntry)), "LLM_MODELS")),
    openaiBaseUrl: Config.option(Config.String("OPENAI_BASE_URL")),
    openaiApiKey: Config.option(Config.Redacted("OPENAI_API_KEY")),
    anthropicBaseUrl: Config.option(Config.String("ANTHROPIC_BASE_URL")),
    anthropicApiKey: Config.option(Config.Redacted("ANTHROPIC_API_KEY")),
    llmTimeoutMs: Config.Int("LLM_TIMEOUT_MS").pipe(Config.withDefault(120_000)),
    llmMaxRetries: Config.Int("LLM_MAX_RETRIES").pipe(Config.withDefault(3)),
    importMaxBytes: Config.Int("IMPORT_MAX_BYTES").pipe(Config.withDefault(20 * 1024 * 1024))
  })

  static readonly layer = Layer.effect(AppConfig, Effect.orDie(AppConfig.fromEnv))

  /** Settings for tests and tools: defaults, overridden where given. */
  static readonly layerWith = (overrides: Partial<AppSettings>) =>
    Layer.succeed(AppConfig, { ...defaults, ...overrides })
}

export const defaults: AppSettings = {
  host: "127.0.0.1",
  port: 3000,
  databaseUrl: Option.none(),
  dataDir: "./.data",
  bootstrap: true,
  adminApiKey: Option.none(),
  rateLimitPerMinute: 600,
  maxBodyBytes: 1024 * 1024,
  shutdownTimeoutMs: 10_000,
  logLevel: "Info",
  llmModels: Option.none(),
  openaiBaseUrl: Option.none(),
  openaiApiKey: Option.none(),
  anthropicBaseUrl: Option.none(),
  anthropicApiKey: Option.none(),
  llmTimeoutMs: 120_000,
  llmMaxRetries: 3,
  importMaxBytes: 20 * 1024 * 1024
}
