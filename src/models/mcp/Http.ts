import { Effect, Layer } from "effect"
import { McpApi } from "./Api.ts"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { ApiDocument, areaApi } from "../../http/Area.ts"
import { BadRequest } from "../../platform/Errors.ts"
import { fromOpenApi } from "./Catalog.ts"
import { callerHeaders, makeExecutor } from "./Execute.ts"
import { capabilities, handleMessage, protocolVersions, serverInfo } from "./JsonRpc.ts"
import { makeTools, toolDefinitions, toolNames } from "./Tools.ts"

const api = areaApi(McpApi)

/** JSON, unless the client accepts only server-sent events. */
const wantsEventStream = (accept: string | undefined) =>
  accept !== undefined && accept.includes("text/event-stream") && !accept.includes("application/json") && !accept.includes("*/*")

const info = {
  name: serverInfo.name,
  version: serverInfo.version,
  protocolVersions: [...protocolVersions],
  capabilities,
  transport: "streamable-http",
  tools: toolNames
}

const McpGroupLive = HttpApiBuilder.group(api, "mcp", (handlers) =>
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const tools = makeTools(fromOpenApi(yield* ApiDocument), makeExecutor(router))
    return handlers
      .handleRaw("rpc", ({ request }) =>
        Effect.gen(function*() {
          // A body that cannot be read (too large, aborted) dies with its server error, which the error middleware answers.
          const text = yield* Effect.orDie(request.text)
          const reply = yield* handleMessage(text, request.headers["mcp-protocol-version"], tools, callerHeaders(request))
          if (reply.body === undefined) return HttpServerResponse.empty({ status: reply.status })
          if (reply.status === 200 && wantsEventStream(request.headers["accept"])) {
            return HttpServerResponse.text(`event: message\ndata: ${JSON.stringify(reply.body)}\n\n`, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache" }
            })
          }
          return HttpServerResponse.jsonUnsafe(reply.body, { status: reply.status })
        }))
      .handle("info", () => Effect.succeed(info))
      .handle("toolsList", () => Effect.succeed({ tools: toolDefinitions }))
      .handle("toolsCall", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const call = tools.call(payload.name, payload.arguments ?? {}, callerHeaders(request))
          if (call === undefined) {
            return yield* new BadRequest({ error: `Unknown tool "${payload.name}": one of ${toolNames.join(", ")}` })
          }
          return yield* call
        }))
  }))

/**
 * The Streamable HTTP transport's GET (a server-initiated event stream) and
 * DELETE (end a session): a stateless server offers neither, and the MCP
 * transport asks for 405 then, which its clients expect.
 */
const methodNotAllowed = (method: "GET" | "DELETE") =>
  HttpRouter.add(
    method,
    "/api/v0/mcp",
    HttpServerResponse.jsonUnsafe(
      { error: `${method} is not supported on the MCP endpoint: it is stateless; POST JSON-RPC messages` },
      { status: 405, headers: { allow: "POST" } }
    )
  )

export const McpLive = Layer.mergeAll(McpGroupLive, methodNotAllowed("GET"), methodNotAllowed("DELETE"))
