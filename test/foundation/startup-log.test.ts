import { describe, expect, it } from "@effect/vitest"
import { Option, Redacted } from "effect"
import { resolve } from "node:path"
import { describeProviders } from "../../src/app/StartupLog.ts"
import { audioDefaults } from "../../src/media/audio/AudioConfig.ts"
import { filesDefaults } from "../../src/media/files/FilesConfig.ts"
import { imagesDefaults } from "../../src/media/images/ImagesConfig.ts"
import { jobsDefaults } from "../../src/work/jobs/JobsConfig.ts"
import { mailDefaults } from "../../src/outreach/mail/MailConfig.ts"
import { defaults } from "../../src/platform/AppConfig.ts"

const line = (lines: ReadonlyArray<string>, prefix: string) => lines.find((text) => text.startsWith(prefix))

describe("the start-up log of providers", () => {
  it("says where e-mail, model calls, job search and files go on a fresh machine, and which setting changes it", () => {
    const lines = describeProviders({ ...defaults, dataDir: "./.data" }, {
      mail: mailDefaults,
      jobs: jobsDefaults,
      files: filesDefaults,
      images: imagesDefaults,
      audio: audioDefaults
    })
    expect(line(lines, "E-mail:")).toBe(`E-mail: written as .eml files to ${resolve(".data/outbox")}, not sent (set SMTP_URL to deliver)`)
    expect(line(lines, "Models:")).toMatch(/offline local models only \(set ANTHROPIC_API_KEY or OPENAI_API_KEY, or LLM_MODELS/)
    expect(line(lines, "Job search:")).toBe("Job search: off, answering 403 (set SERPAPI_API_KEY to enable it)")
    expect(line(lines, "Image generation:")).toBe("Image generation: off, answering 403 (set IMAGES_API_KEY to enable it)")
    expect(line(lines, "Speech:")).toMatch(/offline local voice, eSpeak NG \(set SPEECH_BASE_URL or SPEECH_API_KEY/)
    expect(line(lines, "Database:")).toBe(`Database: embedded (PGlite) in ${resolve(".data")} (set DATABASE_URL for PostgreSQL)`)
    expect(line(lines, "Operator API:")).toMatch(/off \(set ADMIN_API_KEY/)
  })

  it("names each configured provider's host, never its credentials", () => {
    const secrets = ["mail-password", "sk-upstream", "serp-secret", "pg-password", "admin-secret", "img-secret", "speech-secret"]
    const lines = describeProviders({
      ...defaults,
      anthropicApiKey: Option.some(Redacted.make("sk-upstream")),
      openaiBaseUrl: Option.some("http://llm.internal:8080/v1"),
      databaseUrl: Option.some(Redacted.make("postgres://app:pg-password@db.internal:5432/platform")),
      adminApiKey: Option.some(Redacted.make("admin-secret"))
    }, {
      mail: { ...mailDefaults, smtpUrl: Option.some(Redacted.make("smtps://mailer:mail-password@smtp.example.com:465")) },
      jobs: { ...jobsDefaults, apiKey: Option.some(Redacted.make("serp-secret")) },
      files: filesDefaults,
      images: { ...imagesDefaults, apiKey: Option.some(Redacted.make("img-secret")) },
      audio: { ...audioDefaults, baseUrl: Option.some("http://tts.internal:8000/v1"), apiKey: Option.some(Redacted.make("speech-secret")) }
    })
    expect(line(lines, "E-mail:")).toBe("E-mail: sent through the SMTP server smtps://smtp.example.com:465, from Platform <no-reply@localhost>")
    expect(line(lines, "Models:")).toBe(
      "Models: anthropic at https://api.anthropic.com (claude-opus-4-1, claude-sonnet-4-5, claude-haiku-4-5); " +
        "openai at http://llm.internal:8080/v1 (gpt-4.1, gpt-4.1-mini, gpt-4.1-nano)"
    )
    expect(line(lines, "Job search:")).toBe("Job search: the SerpApi-compatible provider at https://serpapi.com")
    expect(line(lines, "Image generation:")).toBe("Image generation: the OpenAI-compatible provider at https://api.openai.com/v1")
    expect(line(lines, "Speech:")).toBe("Speech: the OpenAI-compatible provider at http://tts.internal:8000/v1")
    expect(line(lines, "Database:")).toBe("Database: PostgreSQL at postgres://db.internal:5432/platform")
    expect(line(lines, "Operator API:")).toMatch(/^Operator API: on/)
    for (const secret of [...secrets, "mailer", "app:"]) expect(lines.join("\n")).not.toContain(secret)
  })
})
