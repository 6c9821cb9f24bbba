import { Config, Context, Effect, Layer, Option, type Redacted, Schema } from "effect"

/** One `LLM_MODELS` entry: a model of the catalog (src/models/llm/Catalog.ts). */
export const ModelEntry = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1)),
  provider: Schema.Literals(["openai", "anthropic", "local"]),
  upstream: Schema.optional(Schema.String.check(Schema.isMinLength(1))),
  tier: Schema.optional(Schema.Literals(["highest", "balanced", "fastest"])),
  inputCreditsPerMillion: Schema.optional(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0))),
  outputCreditsPerMillion: Schema.optional(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0))),
  maxOutputTokens: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  /** `embedding` models serve `POST /embeddings` and the knowledge base; `chat` (the default) the rest. */
  kind: Schema.optional(Schema.Literals(["chat", "embedding"])),
  /** The length of an embedding model's vectors (asked of the upstream as `dimensions` when set). */
  dimensions: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 16_000 })))
})

export type ModelEntry = typeof ModelEntry.Type

/** The kernel's settings from the environment; each area's are its own Config (`src/app/Settings.ts` lists them); README's table lists all. */
export interface AppSettings {
  readonly host: string
  readonly port: number
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** Whether V8 may recompile the embedded database's hot functions with its optimizing compiler (PGLITE_WASM_TIER_UP). */
  readonly pgliteWasmTierUp: boolean
  readonly bootstrap: boolean
  readonly adminApiKey: Option.Option<Redacted.Redacted>
  readonly rateLimitPerMinute: number
  readonly maxBodyBytes: number
  readonly shutdownTimeoutMs: number
  /** A client must have sent a request's headers within this time of starting it. */
  readonly headersTimeoutMs: number
  /** ... and the whole request, body included. */
  readonly requestTimeoutMs: number
  /** An idle keep-alive connection is closed after this time. */
  readonly keepAliveTimeoutMs: number
  /** Open connections beyond this are closed as they arrive. */
  readonly maxConnections: number
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
  /** Where this service is reachable from the outside: tracking, unsubscribe and file links start with it. */
  readonly publicBaseUrl: string
}

/** A setting that must be a whole number above zero (a timeout, a cap). */
export const positive = (name: string) => Config.schema(Schema.Int.check(Schema.isGreaterThan(0)), name)

/** As `positive`, with its default. */
export const positiveInt = (name: string, fallback: number) => positive(name).pipe(Config.withDefault(fallback))

/** A comma-separated list, its entries trimmed; empty when unset. */
export const commaList = (name: string) =>
  Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((value) => value.split(",").map((item) => item.trim()).filter((item) => item.length > 0))
  )

const onOffSwitch = (name: string, fallback: "on" | "off") =>
  Config.Literals(["on", "off"], name).pipe(
    Config.withDefault(fallback),
    Config.map((value) => value === "on")
  )

/** An `on`/`off` switch, `on` unless set. */
export const switchedOn = (name: string) => onOffSwitch(name, "on")

/** An `on`/`off` switch, `off` unless set. */
export const switchedOff = (name: string) => onOffSwitch(name, "off")

const BaseUrl = Schema.String.check(
  Schema.isPattern(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: "must be an http:// or https:// URL" })
)

export class AppConfig extends Context.Service<AppConfig, AppSettings>()("platform/AppConfig") {
  static readonly fromEnv = Config.all({
    host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
    port: Config.Port("PORT").pipe(Config.withDefault(3000)),
    databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
    dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.data")),
    pgliteWasmTierUp: switchedOff("PGLITE_WASM_TIER_UP"),
    bootstrap: switchedOn("BOOTSTRAP"),
    adminApiKey: Config.option(Config.Redacted("ADMIN_API_KEY")),
    rateLimitPerMinute: Config.Int("RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(600)),
    maxBodyBytes: Config.Int("MAX_BODY_BYTES").pipe(Config.withDefault(1024 * 1024)),
    shutdownTimeoutMs: Config.Int("SHUTDOWN_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
    headersTimeoutMs: positiveInt("HTTP_HEADERS_TIMEOUT_MS", 20_000),
    requestTimeoutMs: positiveInt("HTTP_REQUEST_TIMEOUT_MS", 60_000),
    keepAliveTimeoutMs: positiveInt("HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000),
    maxConnections: positiveInt("HTTP_MAX_CONNECTIONS", 1_000),
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
    publicBaseUrl: Config.option(Config.schema(BaseUrl, "PUBLIC_BASE_URL"))
  }).pipe(Config.map(({ publicBaseUrl, ...settings }): AppSettings => ({
    ...settings,
    // Unset: the listen address, which is right for a service used on this machine only.
    publicBaseUrl: Option.getOrElse(publicBaseUrl, () => `http://${settings.host}:${settings.port}`).replace(/\/+$/, "")
  })))

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
  pgliteWasmTierUp: false,
  bootstrap: true,
  adminApiKey: Option.none(),
  rateLimitPerMinute: 600,
  maxBodyBytes: 1024 * 1024,
  shutdownTimeoutMs: 10_000,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  logLevel: "Info",
  llmModels: Option.none(),
  openaiBaseUrl: Option.none(),
  openaiApiKey: Option.none(),
  anthropicBaseUrl: Option.none(),
  anthropicApiKey: Option.none(),
  llmTimeoutMs: 120_000,
  llmMaxRetries: 3,
  publicBaseUrl: "http://127.0.0.1:3000"
}
