import { Effect, Stream } from "effect"
import { brandGuide, withBrand } from "../brand/BrandGuide.ts"
import { brandKitOf } from "../brand/BrandKit.ts"
import { ModelCatalog, type LlmRequest } from "../../models/llm/Llm.ts"
import { started } from "../../platform/Streams.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import type { Payer } from "../../accounts/usage/Credits.ts"
import { contentModelTier } from "./ContentModel.ts"
import type { ContentKind, ContentLength, WritingRequest } from "./Kinds.ts"
import { writeOffline } from "./OfflineWriter.ts"

/**
 * The content engine (`POST /content/generate`): a brief becomes an e-mail,
 * subject lines, a social post, a blog post, ad copy or landing-page copy,
 * written for the company's brand kit. A model writes it (one billed stream
 * under feature `content`, held before and settled after); with only the
 * offline `local` models, `OfflineWriter.ts` does. Both produce the same
 * plain-text format, which `parseWriting` turns into `{content, subject?,
 * variants?}`; the streamed `text` deltas are that text as it comes.
 */

export interface Written {
  readonly content: string
  readonly subject?: string | undefined
  readonly variants?: ReadonlyArray<string> | undefined
}

/** The most tokens a model may write, per length. */
const outputTokens: Record<ContentLength, number> = { short: 600, medium: 1_500, long: 4_000 }

const lengthWords: Record<ContentLength, string> = {
  short: "short (about 50–120 words)",
  medium: "medium length (about 150–350 words)",
  long: "long (about 600–1,200 words)"
}

/** What each kind is and the text format `parseWriting` reads back. */
const kindInstructions: Record<ContentKind, string> = {
  email:
    "Write a marketing e-mail. First line: `Subject: ` and the subject line. Then a blank line and the body as plain " +
    "text paragraphs, starting with a greeting that uses the merge field {{firstName}} and ending with a sign-off.",
  subject_lines:
    "Write 5 alternative e-mail subject lines, each under 60 characters, one per line, numbered `1.` to `5.`, nothing else.",
  social_post: "Write one social media post, ready to publish, with up to 3 relevant hashtags at the end.",
  blog_post: "Write a blog post in Markdown: a `# ` title, an introduction, sections with `## ` headings, and a conclusion.",
  ad_copy:
    "Write 3 variants of online ad copy. Each variant is two lines: `Headline: ` (at most 30 characters) and " +
    "`Description: ` (at most 90 characters). Separate the variants with a line containing only `---`.",
  landing_copy:
    "Write landing-page copy in Markdown: a `# ` headline, a one-sentence subheadline, a `## ` benefits section with " +
    "3 bullet points, and a call to action."
}

const systemOf = (request: WritingRequest) =>
  "You are the content engine of a marketing platform: you write ready-to-use copy for the company, from the user's " +
  "brief. Answer with the copy only, no preamble or commentary, in the brief's language.\n\n" +
  `${kindInstructions[request.kind]}\nLength: ${lengthWords[request.length]}.`

const userOf = (request: WritingRequest) =>
  [`Brief: ${request.brief}`, request.tone === undefined ? "" : `Tone: ${request.tone}`].filter((line) => line !== "").join("\n")

const numbering = /^\s*(?:\d+[.)]|[-*•])\s*/

const unquoted = (line: string) => line.replace(/^["“'](.*)["”']$/, "$1").trim()

/** The written text as the API's object, by kind (model or offline: the same format). */
export const parseWriting = (kind: ContentKind, text: string): Written => {
  const trimmed = text.trim()
  switch (kind) {
    case "email": {
      const match = /^\s*subject:\s*(.+)\n?/i.exec(trimmed)
      return match === null
        ? { content: trimmed }
        : { subject: unquoted(match[1]!.trim()), content: trimmed.slice(match[0].length).trim() }
    }
    case "subject_lines": {
      const variants = trimmed.split("\n").map((line) => unquoted(line.replace(numbering, ""))).filter((line) => line !== "")
      return { content: variants.join("\n"), variants }
    }
    case "ad_copy": {
      const variants = trimmed.split(/^\s*-{3,}\s*$/m).map((variant) => variant.trim()).filter((variant) => variant !== "")
      return { content: variants[0] ?? "", variants }
    }
    default:
      return { content: trimmed }
  }
}

/** The offline writer's text, streamed a word at a time like a model's. */
const offlineText = (companyId: string, request: WritingRequest) =>
  Effect.map(brandKitOf(companyId), (kit) => {
    const text = writeOffline(request, { name: kit.name, tone: kit.voice.tone, website: kit.links.website })
    return Stream.fromIterable(text.split(/(?<=\s)/))
  })

/**
 * The text of `request` as a stream of deltas. With a real model it is
 * opened here: the credits are held and the provider has accepted the
 * request before this answers (so "Insufficient credits" is a 403, not an
 * in-band error), and the stream settles the hold however it ends.
 */
export const writeText = Effect.fnUntraced(function*(companyId: string, payer: Payer, request: WritingRequest) {
  const model = (yield* ModelCatalog).resolve(contentModelTier)
  if (model === undefined || model.provider === "local") return yield* offlineText(companyId, request)
  const guide = yield* brandGuide(companyId)
  const llmRequest: LlmRequest = {
    model: model.id,
    system: withBrand(systemOf(request), guide),
    messages: [{ role: "user", content: [{ type: "text", text: userOf(request) }] }],
    maxTokens: outputTokens[request.length]
  }
  return yield* modelText(payer, llmRequest)
})

/**
 * A model call billed under `content`, as its text deltas: held and started
 * when this answers (a refusal comes before any text), settled when the
 * stream ends, however it ends.
 */
export const modelText = Effect.fnUntraced(function*(payer: Payer, request: LlmRequest) {
  const events = yield* started(yield* BilledLlm.stream(payer, "content", request))
  return events.pipe(
    Stream.filter((event) => event.type === "text_delta" && (event.choice ?? 0) === 0),
    Stream.map((event) => (event.type === "text_delta" ? event.text : ""))
  )
})
