import { Effect } from "effect"
import type { CallerHeaders } from "./Execute.ts"
import { toolDefinitions, type Tools } from "./Tools.ts"

/**
 * The MCP methods over JSON-RPC 2.0, stateless: no session is created or
 * needed, so any process can answer any request. `initialize` negotiates the
 * protocol version; later requests may name it in `MCP-Protocol-Version`.
 */

/** Newest first: what `initialize` answers when the client asks for a version we do not speak. */
export const protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const

export const serverInfo = { name: "platform-api", title: "Platform API", version: "1.0.0" } as const

export const capabilities = { tools: { listChanged: false } } as const

const instructions =
  "This server exposes the whole Platform API through three tools. Find an operation with " +
  "platform_list_capabilities (by category or keywords), read its arguments with platform_get_action_details, " +
  "then run it with platform_execute_action. Every action runs with the caller's own permissions."

type Id = string | number

/** A JSON-RPC answer: its HTTP status and body, or no body (202) for notifications and responses. */
export interface RpcReply {
  readonly status: number
  readonly body: Record<string, unknown> | undefined
}

const errorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602
} as const

const failure = (status: number, id: Id | null, code: number, message: string): RpcReply => ({
  status,
  body: { jsonrpc: "2.0", id, error: { code, message } }
})

const success = (id: Id, result: Record<string, unknown>): RpcReply => ({ status: 200, body: { jsonrpc: "2.0", id, result } })

const accepted: RpcReply = { status: 202, body: undefined }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is Id => typeof value === "string" || (typeof value === "number" && Number.isInteger(value))

const parse = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

const isSupported = (version: unknown): version is typeof protocolVersions[number] =>
  protocolVersions.some((supported) => supported === version)

/** Answers one JSON-RPC message posted to the MCP endpoint. */
export const handleMessage = (
  text: string,
  protocolVersion: string | undefined,
  tools: Tools,
  caller: CallerHeaders
): Effect.Effect<RpcReply> => {
  const parsed = parse(text)
  if (!parsed.ok) return Effect.succeed(failure(400, null, errorCodes.parseError, "Parse error: the body is not valid JSON"))
  const message = parsed.value
  if (Array.isArray(message)) {
    const error = "Invalid Request: batches are not supported; send one message per request"
    return Effect.succeed(failure(400, null, errorCodes.invalidRequest, error))
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0") {
    const error = "Invalid Request: expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\""
    return Effect.succeed(failure(400, null, errorCodes.invalidRequest, error))
  }
  const hasId = "id" in message
  const id = hasId && isId(message.id) ? message.id : null
  if (hasId && id === null) {
    return Effect.succeed(failure(400, null, errorCodes.invalidRequest, "Invalid Request: \"id\" must be a string or an integer"))
  }
  if (!("method" in message)) {
    // A client's response to a server request: this server sends none, so it is acknowledged and dropped.
    return Effect.succeed(id !== null && ("result" in message || "error" in message)
      ? accepted
      : failure(400, id, errorCodes.invalidRequest, "Invalid Request: \"method\" is missing"))
  }
  if (typeof message.method !== "string") {
    return Effect.succeed(failure(400, id, errorCodes.invalidRequest, "Invalid Request: \"method\" must be a string"))
  }
  if (protocolVersion !== undefined && !isSupported(protocolVersion)) {
    return Effect.succeed(failure(
      400,
      id,
      errorCodes.invalidRequest,
      `Unsupported MCP-Protocol-Version "${protocolVersion}": supported are ${protocolVersions.join(", ")}`
    ))
  }
  if (id === null) return Effect.succeed(accepted)
  const params = message.params ?? {}
  if (!isRecord(params)) return Effect.succeed(failure(200, id, errorCodes.invalidParams, "Invalid params: \"params\" must be an object"))
  switch (message.method) {
    case "initialize":
      return Effect.succeed(success(id, {
        protocolVersion: isSupported(params.protocolVersion) ? params.protocolVersion : protocolVersions[0],
        capabilities,
        serverInfo,
        instructions
      }))
    case "ping":
      return Effect.succeed(success(id, {}))
    case "tools/list":
      return Effect.succeed(success(id, { tools: toolDefinitions }))
    case "tools/call": {
      if (typeof params.name !== "string") {
        return Effect.succeed(failure(200, id, errorCodes.invalidParams, "Invalid params: \"name\" must be a string"))
      }
      const args = params.arguments ?? {}
      if (!isRecord(args)) {
        return Effect.succeed(failure(200, id, errorCodes.invalidParams, "Invalid params: \"arguments\" must be an object"))
      }
      const call = tools.call(params.name, args, caller)
      return call === undefined
        ? Effect.succeed(failure(200, id, errorCodes.invalidParams, `Unknown tool: ${params.name}`))
        : Effect.map(call, (result) => success(id, result))
    }
    default:
      return Effect.succeed(failure(200, id, errorCodes.methodNotFound, `Method not found: ${message.method}`))
  }
}
