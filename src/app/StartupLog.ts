import { Effect, Layer, Option, Redacted } from "effect"
import { join, resolve } from "node:path"
import { catalogFrom } from "../models/llm/Catalog.ts"
import { AudioConfig, type AudioSettings } from "../media/audio/AudioConfig.ts"
import { FilesConfig, type FilesSettings } from "../media/files/FilesConfig.ts"
import { ImagesConfig, type ImagesSettings } from "../media/images/ImagesConfig.ts"
import { JobsConfig, type JobsSettings } from "../work/jobs/JobsConfig.ts"
import { MailConfig, type OutgoingMailSettings } from "../outreach/mail/MailConfig.ts"
import { AppConfig, type AppSettings } from "../platform/AppConfig.ts"

/** A URL's scheme, host and port (and path when asked): never its user, password or query, which may be secrets. */
const location = (url: string, withPath = false) => {
  try {
    const parsed = new URL(url)
    const path = withPath && parsed.pathname !== "/" ? parsed.pathname : ""
    return `${parsed.protocol}//${parsed.host}${path}`
  } catch {
    return "(an unreadable URL)"
  }
}

const modelsLine = (settings: AppSettings) => {
  const catalog = catalogFrom(settings)
  if ("error" in catalog) return `Models: ${catalog.error}`
  const providers = [...new Set(catalog.models.map((model) => model.provider))]
  if (providers.length === 1 && providers[0] === "local") {
    return "Models: the offline local models only (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or LLM_MODELS, for a real provider)"
  }
  const baseUrls = {
    local: "in process",
    anthropic: location(Option.getOrElse(settings.anthropicBaseUrl, () => "https://api.anthropic.com"), true),
    openai: location(Option.getOrElse(settings.openaiBaseUrl, () => "https://api.openai.com/v1"), true)
  }
  return `Models: ${
    providers.map((provider) => {
      const ids = catalog.models.filter((model) => model.provider === provider).map((model) => model.id)
      return `${provider} at ${baseUrls[provider]} (${ids.join(", ")})`
    }).join("; ")
  }`
}

/**
 * Where the service's optional providers send their work, as the settings
 * chose them: one line each, without credentials. Logged once at start-up,
 * so that nobody has to guess where e-mail went or which models answer.
 */
export const describeProviders = (
  settings: AppSettings,
  areas: {
    readonly mail: OutgoingMailSettings
    readonly jobs: JobsSettings
    readonly files: FilesSettings
    readonly images: ImagesSettings
    readonly audio: AudioSettings
  }
): ReadonlyArray<string> => [
  Option.match(settings.databaseUrl, {
    onNone: () => `Database: embedded (PGlite) in ${resolve(settings.dataDir)} (set DATABASE_URL for PostgreSQL)`,
    onSome: (url) => `Database: PostgreSQL at ${location(Redacted.value(url), true)}`
  }),
  Option.match(areas.mail.smtpUrl, {
    onNone: () =>
      `E-mail: written as .eml files to ${resolve(join(settings.dataDir, "outbox"))}, not sent (set SMTP_URL to deliver)`,
    onSome: (url) => `E-mail: sent through the SMTP server ${location(Redacted.value(url))}, from ${areas.mail.from}`
  }),
  `Links in e-mails (tracking, unsubscribe) and public file URLs start with ${settings.publicBaseUrl} (PUBLIC_BASE_URL)`,
  modelsLine(settings),
  Option.isSome(areas.jobs.apiKey)
    ? `Job search: the SerpApi-compatible provider at ${location(areas.jobs.baseUrl, true)}`
    : "Job search: off, answering 403 (set SERPAPI_API_KEY to enable it)",
  Option.isSome(areas.images.apiKey)
    ? `Image generation: the OpenAI-compatible provider at ${location(areas.images.baseUrl, true)}`
    : "Image generation: off, answering 403 (set IMAGES_API_KEY to enable it)",
  Option.isSome(areas.audio.baseUrl) || Option.isSome(areas.audio.apiKey)
    ? `Speech: the OpenAI-compatible provider at ${location(Option.getOrElse(areas.audio.baseUrl, () => "https://api.openai.com/v1"), true)}`
    : "Speech: the offline local voice, eSpeak NG (set SPEECH_BASE_URL or SPEECH_API_KEY for a provider)",
  Option.match(areas.files.blobDir, {
    onNone: () => "Uploaded files: stored in the database (set BLOB_DIR for a folder)",
    onSome: (folder) => `Uploaded files: stored in ${resolve(folder)}`
  }),
  Option.isSome(settings.adminApiKey)
    ? "Operator API: on at /api/v0/admin/ (ADMIN_API_KEY)"
    : "Operator API: off (set ADMIN_API_KEY to enable /api/v0/admin/)"
]

/** Logs `describeProviders` once, at Info level. */
export const ProvidersLogged = Layer.effectDiscard(
  Effect.gen(function*() {
    const lines = describeProviders(yield* AppConfig, {
      mail: yield* MailConfig,
      jobs: yield* JobsConfig,
      files: yield* FilesConfig,
      images: yield* ImagesConfig,
      audio: yield* AudioConfig
    })
    yield* Effect.forEach(lines, (line) => Effect.logInfo(line), { discard: true })
  })
)
