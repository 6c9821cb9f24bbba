import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import * as Browser from "../../media/browser/Browser.ts"
import { BrowserExtract } from "../../media/browser/Extract.ts"
import * as Engine from "../content/Engine.ts"
import { ContentResearch } from "../content/Research.ts"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import { EmbeddingsModel } from "../documents/EmbeddingsModel.ts"
import { KnowledgeSettingsLive } from "../documents/Http.ts"
import { ApiDocument, areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { fromOpenApi } from "../../models/mcp/Catalog.ts"
import { callerHeaders, makeExecutor } from "../../models/mcp/Execute.ts"
import { makeTools } from "../../models/mcp/Tools.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Chat from "./Chat.ts"
import { AgentChatApi } from "./ChatApi.ts"

const api = areaApi(AgentChatApi)

export const AgentChatLive = HttpApiBuilder.group(api, "agentChat", (handlers) =>
  Effect.gen(function*() {
    // search_knowledge searches with the knowledge base's embeddings model.
    const model = yield* EmbeddingsModel
    const chat = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      answer(authorize("agents:chat")(effect)).pipe(Effect.provideService(EmbeddingsModel, model))
    const browser = yield* BrowserExtract
    /** browse_page: the browser extract as the caller's own `POST /browser/extract` (content:use). */
    const browse = (url: string) =>
      authorize("content:use")(Browser.extract({ url })).pipe(Effect.provideService(BrowserExtract, browser))
    const researcher = yield* ContentResearch
    const billing = yield* Effect.context<Credits | Llm | ModelCatalog>()
    /** web_research: the caller's own `POST /content/research` (content:use), billed to them as it is. */
    const research = (query: string) =>
      authorize("content:use")(Engine.research({ query })).pipe(
        Effect.provideService(ContentResearch, researcher),
        Effect.provideContext(billing)
      )
    const router = yield* HttpRouter.HttpRouter
    // platform_action is the MCP server's platform_execute_action: the same catalog and in-process execution.
    const mcp = makeTools(fromOpenApi(yield* ApiDocument), makeExecutor(router))
    /** platform_action for this request's caller: their own credentials travel with each operation. */
    const actionsOf = (request: HttpServerRequest.HttpServerRequest) => {
      const caller = callerHeaders(request)
      return (args: Readonly<Record<string, unknown>>) => mcp.call("platform_execute_action", args, caller)!
    }
    return handlers
      .handle("agentChat", ({ params, payload, request }) =>
        chat(Chat.chatWithAgent(params.agent_id, payload, { platformAction: actionsOf(request), browse, research })))
      .handle("employeeChat", ({ params, payload, request }) =>
        chat(Chat.chatWithEmployee(params.employee_id, payload, { platformAction: actionsOf(request), browse, research })))
      .handle("agentThreads", ({ params, query }) => chat(Chat.listThreads("agent", params.agent_id, pageRequest(query))))
      .handle("agentThread", ({ params }) => chat(Chat.getThread("agent", params.agent_id, params.threadId)))
      .handle("employeeThreads", ({ params, query }) =>
        chat(Chat.listThreads("employee", params.employee_id, pageRequest(query))))
      .handle("employeeThread", ({ params }) => chat(Chat.getThread("employee", params.employee_id, params.threadId)))
  })).pipe(Layer.provide([KnowledgeSettingsLive, ContentResearch.layer]))
