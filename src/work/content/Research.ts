import { Context, Effect, Layer, Stream } from "effect"
import { ConversionPool, convertBytes } from "../documents/ConversionPool.ts"
import { DocumentsConfig } from "../documents/DocumentsConfig.ts"
import { JobProvider, type JobResults } from "../jobs/JobProvider.ts"
import { type LlmError, ModelCatalog, prompt } from "../../models/llm/Llm.ts"
import { GuardedFetch, type OutboundError } from "../../platform/Outbound.ts"
import type * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { Credits, type Payer } from "../../accounts/usage/Credits.ts"
import type { InsufficientCredits } from "../../accounts/usage/Errors.ts"
import { contentModelTier } from "./ContentModel.ts"
import { modelText } from "./Writing.ts"
import { ResearchFailed, ResearchLimited, ResearchNotConfigured } from "./Errors.ts"
import { appendix, type DroppedSource, extractiveReport, type ReadSource, reportPrompt, reportSystem } from "./ResearchReport.ts"

/**
 * Content research (`POST /content/research`, and the agents' `web_research`
 * tool): one web search through the SerpApi-compatible provider
 * (`engine=google`, 1 data credit, held before and released when the search
 * fails), each result's page fetched through the outbound guard and
 * converted to Markdown by the documents' converter on its worker threads,
 * then a cited report written by the model (billed under `content`) or, with
 * only the offline models, extracted from the pages. A result the guard
 * refuses (an internal address) or that fails is never read and the report
 * says so (docs/content.md).
 */

export interface ResearchRequest {
  readonly query: string
  /** 1–10. */
  readonly maxSources: number
}

export interface ResearchResult {
  readonly report: string
  /** The pages read, numbered as the report cites them (1-based). */
  readonly sources: ReadonlyArray<{ readonly url: string; readonly title: string; readonly snippet: string }>
}

interface SearchResult {
  readonly url: string
  readonly title: string
  readonly snippet: string
}

/** The most tokens the model writes for one report. */
const reportTokens = 2_000

const searchCost = { feature: "content", credits: 1, pool: "data" } as const

const text = (value: unknown) => (typeof value === "string" ? value : "")

/** The provider's organic results with an http(s) link, each link once, in its order. */
export const organicResults = (results: JobResults, max: number): Array<SearchResult> => {
  const organic = Array.isArray(results.organic_results) ? results.organic_results as Array<unknown> : []
  const seen = new Set<string>()
  const found: Array<SearchResult> = []
  for (const entry of organic) {
    if (found.length === max) break
    if (typeof entry !== "object" || entry === null) continue
    const item = entry as Record<string, unknown>
    const url = text(item.link)
    if (!/^https?:\/\//i.test(url) || seen.has(url)) continue
    seen.add(url)
    found.push({ url, title: text(item.title) || url, snippet: text(item.snippet) })
  }
  return found
}

const searchRefusal = (error: OutboundError) =>
  error.kind === "rate_limited" ? new ResearchLimited({ message: error.message }) : new ResearchFailed({ message: error.message })

const modelRefusal = (error: LlmError) =>
  error.kind === "rate_limited"
    ? new ResearchLimited({ message: error.message })
    : new ResearchFailed({ message: `The model could not write the report: ${error.message}` })

export class ContentResearch extends Context.Service<ContentResearch, {
  readonly research: (payer: Payer, request: ResearchRequest) => Effect.Effect<
    ResearchResult,
    ResearchNotConfigured | ResearchLimited | ResearchFailed | InsufficientCredits,
    Credits | Effect.Services<ReturnType<typeof BilledLlm.stream>>
  >
}>()("content/ContentResearch") {
  static readonly layer = Layer.effect(ContentResearch, Effect.gen(function*() {
    const provider = yield* JobProvider
    const guard = yield* GuardedFetch
    const converters = yield* Effect.context<ConversionPool | DocumentsConfig>()

    /** The page as Markdown, or why it was not read. */
    const read = (result: SearchResult) =>
      Effect.gen(function*() {
        const page = yield* guard.fetch(result.url)
        if (page.status < 200 || page.status >= 300) return `it answered HTTP ${page.status}`
        const reply = yield* Effect.provideContext(
          convertBytes(page.body, { name: new URL(page.url).pathname, declaredType: page.contentType ?? "" }),
          converters
        )
        return reply.ok ? { ...result, markdown: reply.content } : `it ${reply.reason}`
      }).pipe(Effect.catch((error) => Effect.succeed(error.message)))

    const research = Effect.fnUntraced(function*(payer: Payer, request: ResearchRequest) {
      if (!provider.configured) return yield* new ResearchNotConfigured({})
      const credits = yield* Credits
      const found = yield* credits.withHold(payer, searchCost, (hold) =>
        provider.search("google", { q: request.query }).pipe(
          Effect.tap(() => hold.report({ credits: searchCost.credits })),
          Effect.mapError(searchRefusal)
        ))
      const results = organicResults(found, request.maxSources)
      const pages = yield* Effect.forEach(results, read, { concurrency: 5 })
      const sources: Array<ReadSource> = []
      const dropped: Array<DroppedSource> = []
      results.forEach((result, index) => {
        const page = pages[index]!
        if (typeof page === "string") dropped.push({ url: result.url, title: result.title, reason: page })
        else sources.push(page)
      })
      const model = (yield* ModelCatalog).resolve(contentModelTier)
      const body = model === undefined || model.provider === "local" || sources.length === 0
        ? extractiveReport(request.query, sources)
        : yield* modelText(payer, { ...prompt(model.id, reportPrompt(request.query, sources), reportSystem), maxTokens: reportTokens }).pipe(
          Effect.flatMap(Stream.mkString),
          Effect.scoped,
          Effect.map((report) => report.trim()),
          Effect.mapError((error) => (error._tag === "LlmError" ? modelRefusal(error) : error))
        )
      return {
        report: `${body}\n\n${appendix(sources, dropped)}`,
        sources: sources.map(({ url, title, snippet }) => ({ url, title, snippet }))
      }
    })
    return { research }
  })).pipe(Layer.provide([JobProvider.layer, GuardedFetch.layer, ConversionPool.layer]))
}
