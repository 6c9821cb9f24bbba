import { Config, Context, Effect, Layer, Option, type Redacted } from "effect"
import { positiveInt } from "../../platform/AppConfig.ts"

/** The SerpApi-compatible job-search provider (docs/jobs.md, README); no key: job search answers 403. */
export interface JobsSettings {
  /** `SERPAPI_BASE_URL`. */
  readonly baseUrl: string
  /** `SERPAPI_API_KEY`. */
  readonly apiKey: Option.Option<Redacted.Redacted>
  /** `SERPAPI_TIMEOUT_MS`: bounds each attempt. */
  readonly timeoutMs: number
  /** `SERPAPI_MAX_RETRIES`: retries after 429, 5xx or a network failure. */
  readonly maxRetries: number
}

export const jobsDefaults: JobsSettings = {
  baseUrl: "https://serpapi.com",
  apiKey: Option.none(),
  timeoutMs: 30_000,
  maxRetries: 3
}

export class JobsConfig extends Context.Service<JobsConfig, JobsSettings>()("jobs/JobsConfig") {
  static readonly fromEnv = Config.all({
    baseUrl: Config.String("SERPAPI_BASE_URL").pipe(Config.withDefault(jobsDefaults.baseUrl)),
    apiKey: Config.option(Config.Redacted("SERPAPI_API_KEY")),
    timeoutMs: positiveInt("SERPAPI_TIMEOUT_MS", jobsDefaults.timeoutMs),
    maxRetries: Config.Int("SERPAPI_MAX_RETRIES").pipe(Config.withDefault(jobsDefaults.maxRetries))
  })

  static readonly layer = Layer.effect(JobsConfig, Effect.orDie(JobsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<JobsSettings> = {}) =>
    Layer.succeed(JobsConfig, { ...jobsDefaults, ...overrides })
}
