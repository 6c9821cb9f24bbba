import { Effect, Schema } from "effect"
import { authorize } from "../../auth/Policy.ts"
import type { CurrentPrincipal, Principal } from "../../auth/Principal.ts"
import type { PrincipalLookup } from "../../auth/PrincipalLookup.ts"
import type { ExtractedPage } from "../../media/browser/Api.ts"
import type { ResearchResult } from "../content/Research.ts"
import * as Knowledge from "../documents/Knowledge.ts"
import { type AgentTool, agentTool } from "../../models/llm/Agent.ts"
import type { CallToolResult } from "../../models/mcp/Api.ts"
import * as Memories from "../memories/Memories.ts"
import { isRefusal } from "../../platform/Refusal.ts"
import { NonBlankText } from "../../platform/Schemas.ts"
import type { AgentToolName } from "./ToolNames.ts"

/**
 * The tools of conversations (DESIGN §7.2), declared once with Effect
 * Schemas. Each runs as the caller: through the same services and permission
 * checks as the caller's own REST call (`authorize`), or for
 * `platform_action` as an in-process REST call with the caller's credentials
 * (src/models/mcp/Execute.ts), so that nothing a document or the model says can do
 * more than the caller may. A refusal is the tool's error, which the model reads.
 */

/** What a refusal or API error says; anything else is not shown to the model. */
const errorText = (error: unknown): string =>
  isRefusal(error)
    ? error.message
    : typeof error === "object" && error !== null && "error" in error && typeof error.error === "string"
    ? error.error
    : "The tool failed"

/** What the tools act on behalf of. */
export interface ToolCaller {
  readonly principal: Principal
  /** The thread's project: knowledge search is scoped to it. */
  readonly projectId: string | undefined
  /** Runs an operation of the MCP catalog as the caller; absent where no caller's credentials exist. */
  readonly platformAction?: ((args: Readonly<Record<string, unknown>>) => Effect.Effect<CallToolResult>) | undefined
  /** Reads a web page through the browser extract (`src/media/browser/`) as the caller; absent where no browser is at hand. */
  readonly browse?: ((url: string) => Effect.Effect<typeof ExtractedPage.Type, unknown, CurrentPrincipal | PrincipalLookup>) | undefined
  /** Researches the web (`src/work/content/Research.ts`) as the caller; absent where research is not at hand. */
  readonly research?: ((query: string) => Effect.Effect<ResearchResult, unknown, CurrentPrincipal | PrincipalLookup>) | undefined
}

const WebResearch = Schema.Struct({
  query: NonBlankText(500).annotate({ description: "What to find out on the web" })
})

const BrowsePage = Schema.Struct({
  url: NonBlankText(8_000).annotate({ description: "The http(s) address of the page" })
})

/** Links a page answers to the model at most. */
const maxLinks = 50

const SearchKnowledge = Schema.Struct({
  query: NonBlankText(2_000).annotate({ description: "What to look for: keywords or a question" }),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })).annotate({
    description: "How many passages (1–20, default 5)"
  }))
})

const Remember = Schema.Struct({
  content: NonBlankText(10_000).annotate({ description: "The fact to keep about the user, in one sentence" }),
  category: Schema.optional(NonBlankText(100).annotate({ description: "A category, e.g. preferences (default general)" }))
})

const Recall = Schema.Struct({
  query: Schema.optional(Schema.String.check(Schema.isMaxLength(2_000)).annotate({
    description: "Words the memories should contain; none: the newest memories"
  })),
  category: Schema.optional(NonBlankText(100))
})

const PlatformAction = Schema.StructWithRest(
  Schema.Struct({
    operationId: NonBlankText(200).annotate({ description: "The operation to run, e.g. projects_list" })
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ description: "operationId plus the operation's path, query and body fields, flat" })

/** Operations of this group are not actions: an agent does not start conversations. */
const conversationCategory = "agentChat_"

const maxRecalled = 20

const toolsFor = (caller: ToolCaller) => {
  const companyId = caller.principal.companyId
  return {
    search_knowledge: agentTool(
      "search_knowledge",
      "Searches the company's knowledge base (its documents) and answers the best passages with their document titles. Use it for any question about the company, its products or policies, and cite the titles.",
      SearchKnowledge,
      (input) =>
        authorize("documents:read")(Knowledge.search({ query: input.query, limit: input.limit ?? 5, projectId: caller.projectId })).pipe(
          Effect.map(({ results }) => ({
            result: {
              results: results.map((hit) => ({ title: hit.title, documentId: hit.documentId, content: hit.content, score: hit.score }))
            }
          })),
          Effect.mapError(errorText)
        )
    ),
    remember: agentTool(
      "remember",
      "Keeps a fact about the user (a preference, a name, a decision) for later conversations.",
      Remember,
      (input) =>
        authorize("memories:use")(Memories.create(companyId, { content: input.content, category: input.category })).pipe(
          Effect.map((memory) => ({ result: { remembered: { id: memory.id, content: memory.content, category: memory.category } } })),
          Effect.mapError(errorText)
        )
    ),
    recall: agentTool(
      "recall",
      "Finds what was kept about the user with remember: the memories matching the words, or the newest ones.",
      Recall,
      (input) =>
        authorize("memories:use")(Memories.recall(companyId, input, maxRecalled)).pipe(
          Effect.map((memories) => ({
            result: { memories: memories.map((memory) => ({ content: memory.content, category: memory.category })) }
          })),
          Effect.mapError(errorText)
        )
    ),
    browse_page: agentTool(
      "browse_page",
      "Opens a web page in a browser and answers its title, final address, text as Markdown and links. Internal addresses are refused.",
      BrowsePage,
      (input): Effect.Effect<{ readonly result: unknown }, string, CurrentPrincipal | PrincipalLookup> => {
        const browse = caller.browse
        if (browse === undefined) return Effect.fail("browse_page is not available here")
        return browse(input.url).pipe(
          Effect.map((page) => ({
            result: { url: page.finalUrl, title: page.title, markdown: page.markdown, links: page.links.slice(0, maxLinks) }
          })),
          Effect.mapError(errorText)
        )
      }
    ),
    web_research: agentTool(
      "web_research",
      "Searches the web, reads the best pages (internal addresses are never read) and answers a cited report with its sources. Costs the user a data credit and the report's model call.",
      WebResearch,
      (input): Effect.Effect<{ readonly result: unknown }, string, CurrentPrincipal | PrincipalLookup> => {
        const research = caller.research
        if (research === undefined) return Effect.fail("web_research is not available here")
        return research(input.query).pipe(
          Effect.map((found) => ({ result: { report: found.report, sources: found.sources } })),
          Effect.mapError(errorText)
        )
      }
    ),
    platform_action: agentTool(
      "platform_action",
      "Runs one operation of the platform's API as the user (same rights, plan and credits): operationId plus the operation's fields, flat. A failure answers the HTTP status and message.",
      PlatformAction,
      (input): Effect.Effect<{ readonly result: unknown }, string> => {
        const run = caller.platformAction
        if (run === undefined) return Effect.fail("platform_action is not available here: it needs the caller's own credentials")
        if (input.operationId.startsWith(conversationCategory)) {
          return Effect.fail(`${input.operationId} starts a conversation, which an agent cannot do`)
        }
        return Effect.flatMap(run(input), (answered) =>
          answered.isError === true
            ? Effect.fail(JSON.stringify(answered.structuredContent ?? answered.content))
            : Effect.succeed({ result: answered.structuredContent ?? {} }))
      }
    )
  }
}

type Services<T> = T extends AgentTool<never, infer R> ? R : never

/** What the tools need to run. */
export type ToolServices = Services<ReturnType<typeof toolsFor>[AgentToolName]>

/** The tools `allowed`, acting for `caller`. */
export const agentTools = (caller: ToolCaller, allowed: ReadonlyArray<AgentToolName>): ReadonlyArray<AgentTool<never, ToolServices>> => {
  const tools = toolsFor(caller)
  return allowed.map((name) => tools[name])
}
