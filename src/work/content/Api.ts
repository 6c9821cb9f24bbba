import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { SseEvent } from "../../models/gateway/Sse.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../../platform/Errors.ts"
import { NonBlankText, Text } from "../../platform/Schemas.ts"
import { contentKinds, contentLengths } from "./Kinds.ts"

/** The largest `content` the content tools take: 500 KB of UTF-8 (well above Gmail's ~102 KB clipping). */
export const maxContentBytes = 500 * 1024
/** The largest `subject`, in characters. */
export const maxSubjectLength = 1_000

const Content = Schema.String.check(
  Schema.makeFilter((content: string) => content.trim().length > 0 || "must not be empty"),
  Schema.makeFilter((content: string) =>
    content.length <= maxContentBytes && Buffer.byteLength(content, "utf8") <= maxContentBytes ||
    `must be at most ${maxContentBytes / 1024} KB (${maxContentBytes} bytes of UTF-8)`
  )
)

export const SpamCheckRequest = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  /** The e-mail body, plain text or HTML. */
  content: Content,
  subject: Schema.optional(Text(maxSubjectLength))
})

export const SpamMetric = Schema.Struct({
  name: Schema.String,
  score: Schema.Number,
  description: Schema.String,
  issues: Schema.Array(Schema.String),
  suggestions: Schema.Array(Schema.String)
}).annotate({ identifier: "SpamMetric" })

/** The spec's Spam analysis. */
export const SpamAnalysis = Schema.Struct({
  overallScore: Schema.Number,
  verdict: Schema.Literals(["excellent", "good", "average", "poor", "spam"]),
  metrics: Schema.Array(SpamMetric),
  spamWordsFound: Schema.Array(Schema.String),
  summary: Schema.String,
  improvedSubject: Schema.optional(Schema.String),
  improvedContent: Schema.optional(Schema.String)
}).annotate({ identifier: "SpamAnalysis" })

export const SpintaxRequest = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  content: Content,
  subject: Schema.optional(Text(maxSubjectLength)),
  /** Vary every eligible word, not only phrases and one word per sentence. */
  aggressive: Schema.optional(Schema.Boolean)
})

/** The spec's Spintax result. */
export const SpintaxResult = Schema.Struct({
  content: Schema.String,
  subject: Schema.String,
  explanation: Schema.String
}).annotate({ identifier: "SpintaxResult" })

export const GenerateRequest = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  kind: Schema.Literals(contentKinds),
  /** What to write: the topic, the offer, the points to make. */
  brief: NonBlankText(10_000),
  tone: Schema.optional(NonBlankText(200)),
  length: Schema.optional(Schema.Literals(contentLengths)),
  /** Server-sent `text` deltas, then `done` with the result. */
  stream: Schema.optional(Schema.Boolean)
}).annotate({
  identifier: "GenerateRequest",
  examples: [{ kind: "email", brief: "Announce our spring sale: 20% off all roasts until April 30.", tone: "warm", length: "short" }]
})

/** What the content engine wrote: `subject` for an e-mail, `variants` for subject lines and ad copy. */
export const Generated = Schema.Struct({
  content: Schema.String,
  subject: Schema.optional(Schema.String),
  variants: Schema.optional(Schema.Array(Schema.String))
}).annotate({ identifier: "GeneratedContent" })

export const ResearchRequest = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  query: NonBlankText(500),
  maxSources: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })))
}).annotate({ identifier: "ResearchRequest", examples: [{ query: "specialty coffee market trends 2026", maxSources: 5 }] })

export const ResearchSource = Schema.Struct({ url: Schema.String, title: Schema.String, snippet: Schema.String })
  .annotate({ identifier: "ResearchSource" })

export const ResearchReport = Schema.Struct({ report: Schema.String, sources: Schema.Array(ResearchSource) })
  .annotate({ identifier: "ResearchReport" })

export class ContentApi extends HttpApiGroup.make("content")
  .annotateMerge(OpenApi.annotations({
    description: "Content tools: a deliverability spam check with rewrites, and spintax variations of an e-mail.",
    override: { "x-displayName": "Content" }
  })).add(
  HttpApiEndpoint.post("spamCheck", "/content/spam-check", {
    payload: SpamCheckRequest,
    success: SpamAnalysis,
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Check an e-mail for spam signals",
    does: "Scores an e-mail body (plain text or HTML, at most 500 KB) and optional subject for deliverability: eight " +
        "metrics (subject line, trigger phrases, formatting, links, images, compliance, length, personalisation), " +
        "each with issues and suggestions, a weighted overall score and a verdict. Below 70 it adds improvedSubject " +
        "and improvedContent (a model's rewrite when a model provider is configured, billed under `content`; " +
        "otherwise, or when the rewrite does not score better, a rule-based one). Needs the `content:use` " +
        "permission. 400 for empty or oversized content, 403 without the permission or credits, 404 for another company.",
    who: "content:use"
  })),
  HttpApiEndpoint.post("spintax", "/content/spintax", {
    payload: SpintaxRequest,
    success: SpintaxResult,
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Add spintax variations to an e-mail",
    does: "Rewrites the body and subject with `{{RANDOM | option1 | option2}}` groups so that each recipient can get a " +
        "different wording: greetings, openers, calls to action and sign-offs first, then single words (every " +
        "eligible word with `aggressive: true`). Merge fields, URLs, e-mail addresses, numbers, prices, HTML markup " +
        "and existing spintax are never changed. With a model provider configured the model proposes variations " +
        "(billed under `content`) which are validated before use. Needs `content:use`. 400 for empty or oversized " +
        "content, a non-boolean `aggressive`, or malformed spintax (naming its line and column).",
    who: "content:use"
  })),
  HttpApiEndpoint.post("generate", "/content/generate", {
    payload: GenerateRequest,
    success: [Generated, HttpApiSchema.StreamSse({ events: SseEvent })],
    error: [BadRequest, Forbidden, NotFound, RateLimited, InternalError]
  }).pipe(described({
    summary: "Write content from a brief",
    does: "The content engine: writes an `email` (content and subject), `subject_lines` (variants), a `social_post`, " +
      "a `blog_post` (Markdown), `ad_copy` (variants of headline and description) or `landing_copy` (Markdown) from " +
      "a brief, in the optional tone and length (`short`, `medium` default, `long`), following the company's brand " +
      "kit. Answers `{content, subject?, variants?}`; with `stream: true`, server-sent events `text` {delta} and " +
      "last `done` with that object (or `error` {error}). Written by the configured model, billed under `content`; " +
      "with only the offline models, by templates that restate the brief (no charge).",
    who: "content:use",
    errors: {
      400: "naming the field: an unknown kind or length, an empty or oversized brief",
      403: "without the permission or credits",
      404: "for another company",
      429: "when the model provider keeps rate limiting",
      500: "when the model provider fails"
    }
  })),
  HttpApiEndpoint.post("research", "/content/research", {
    payload: ResearchRequest,
    success: ResearchReport,
    error: [BadRequest, Forbidden, NotFound, RateLimited, InternalError]
  }).pipe(described({
    summary: "Research the web and write a cited report",
    does: "One web search through the SerpApi-compatible provider (`engine=google`, 1 data credit), the first " +
      "`maxSources` results (1–10, default 5) fetched through the outbound guard and converted to Markdown, then a " +
      "Markdown report citing them as [n] (by the configured model, billed under `content`; with only the offline " +
      "models, the pages' passages that best match the query). `sources` lists the pages read, numbered as cited; a " +
      "result at an internal address, or one that fails, is never read and the report says it was dropped.",
    who: "content:use",
    errors: {
      400: "naming the field: an empty or oversized query, maxSources outside 1–10",
      403: "without the permission, credits or data credits, or when SERPAPI_API_KEY is not set",
      404: "for another company",
      429: "when the search provider or the model keeps rate limiting",
      500: "when the search provider or the model fails"
    }
  }))
).middleware(Authentication).prefix("/api/v0") {}
