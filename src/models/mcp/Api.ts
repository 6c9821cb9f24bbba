import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest } from "../../platform/Errors.ts"

/** A JSON object of any shape (JSON Schemas, tool arguments, structured results). */
const AnyObject = Schema.Record(Schema.String, Schema.Unknown)

/** One MCP tool as `tools/list` describes it. */
export const McpTool = Schema.Struct({
  name: Schema.String,
  title: Schema.String,
  description: Schema.String,
  inputSchema: AnyObject,
  annotations: Schema.Struct({
    title: Schema.String,
    readOnlyHint: Schema.Boolean,
    destructiveHint: Schema.Boolean,
    idempotentHint: Schema.Boolean,
    openWorldHint: Schema.Boolean
  })
}).annotate({ identifier: "McpTool" })

export const McpToolList = Schema.Struct({ tools: Schema.Array(McpTool) }).annotate({ identifier: "McpToolList" })

export const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/** MCP's CallToolResult: text content, the same data structured, and `isError` for failures. */
export const CallToolResult = Schema.Struct({
  content: Schema.Array(TextContent),
  structuredContent: Schema.optional(AnyObject),
  isError: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "CallToolResult" })

export type CallToolResult = typeof CallToolResult.Type

export const CallToolRequest = Schema.Struct({
  name: Schema.String.check(Schema.isMaxLength(200)),
  arguments: Schema.optional(AnyObject)
}).annotate({ identifier: "CallToolRequest" })

export const McpInfo = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  protocolVersions: Schema.Array(Schema.String),
  capabilities: AnyObject,
  transport: Schema.String,
  tools: Schema.Array(Schema.String)
}).annotate({ identifier: "McpInfo" })

/**
 * What `POST /mcp` accepts, for the reference: one JSON-RPC 2.0 request,
 * notification (no `id`) or response to the server (`result` or `error`).
 * The handler reads the body itself, to answer JSON-RPC errors.
 */
export const JsonRpcMessage = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(Schema.Union([Schema.String, Schema.Number])),
  method: Schema.optional(Schema.String),
  params: Schema.optional(AnyObject),
  result: Schema.optional(AnyObject),
  error: Schema.optional(AnyObject)
}).annotate({ identifier: "JsonRpcMessage" })

export const JsonRpcResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.NullOr(Schema.Union([Schema.String, Schema.Number])),
  result: Schema.optional(AnyObject),
  error: Schema.optional(Schema.Struct({ code: Schema.Int, message: Schema.String, data: Schema.optional(Schema.Unknown) }))
}).annotate({ identifier: "JsonRpcResponse" })

const toolsDescription =
  "The tools are platform_list_capabilities (browse categories and operations, or search them by keywords), " +
  "platform_get_action_details (one operation's parameters, body and response as JSON Schema) and " +
  "platform_execute_action (run an operation with the caller's own credentials)."

/**
 * The MCP server: the whole API as three tools, over the MCP Streamable HTTP
 * transport and over plain REST. Every route authenticates like the REST API.
 */
export class McpApi extends HttpApiGroup.make("mcp")
  .annotateMerge(OpenApi.annotations({
    description: "The Model Context Protocol server: the whole API as three tools (search, describe, execute as " +
      "the caller), over Streamable HTTP and plain REST. See docs/mcp.md for client configuration.",
    override: { "x-displayName": "MCP server" }
  })).add(
  HttpApiEndpoint.post("rpc", "/mcp", { payload: JsonRpcMessage, success: JsonRpcResponse })
    .pipe(described({
    summary: "MCP Streamable HTTP endpoint (JSON-RPC 2.0)",
    does: "The Model Context Protocol over Streamable HTTP, stateless: initialize (protocol-version negotiation), " +
        "notifications/initialized, ping, tools/list and tools/call. Answers JSON, or one server-sent event when the " +
        "client accepts only text/event-stream. Notifications answer 202 without a body. Malformed JSON-RPC answers " +
        "400 with a JSON-RPC error; unknown methods and tools answer JSON-RPC errors." +
        toolsDescription,
    who: "anyKey"
  })),
  HttpApiEndpoint.get("info", "/mcp/info", { success: McpInfo })
    .pipe(described({
    summary: "MCP server information",
    does: "Name, version, supported protocol versions, capabilities and tool names.",
    who: "anyKey"
  })),
  HttpApiEndpoint.get("toolsList", "/mcp/tools/list", { success: McpToolList })
    .pipe(described({
    summary: "List the MCP tools",
    does: `The three tools with their descriptions and input JSON Schemas. ${toolsDescription}`,
    who: "anyKey"
  })),
  HttpApiEndpoint.post("toolsCall", "/mcp/tools/call", { payload: CallToolRequest, success: CallToolResult, error: BadRequest })
    .pipe(described({
    summary: "Call an MCP tool",
    does: "Runs one tool with `arguments` and answers its CallToolResult; a failing operation is a result with " +
        "`isError: true` (status and `{error}` inside), not an HTTP error. A missing `name` or an unknown tool answers 400.",
    who: "anyKey"
  }))
).middleware(Authentication).prefix("/api/v0") {}
