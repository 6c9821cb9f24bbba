import { Config, Context, Effect, Layer, Option, Redacted } from "effect"

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
    )
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
  logLevel: "Info"
}
