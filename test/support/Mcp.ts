import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { serverUrl } from "./LoopbackServer.ts"

/**
 * The official MCP TypeScript SDK client, connected (initialized) to the
 * loopback server's `/api/v0/mcp` with the given headers, closed with the scope.
 */
export const mcpClient = (headers: Record<string, string>) =>
  Effect.gen(function*() {
    const base = yield* serverUrl
    return yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
        const client = new Client({ name: "platform-api-tests", version: "1.0.0" })
        const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/v0/mcp`), { requestInit: { headers } })
        await client.connect(transport)
        return { client, transport }
        },
        catch: (error) => error
      }),
      ({ client }) => Effect.promise(() => client.close())
    )
  })

/** A tool call's result through the SDK client. */
export const callTool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)

/** A raw request to the loopback server with `fetch`, for what the SDK client never sends; JSON bodies parsed. */
export const rawRequest = (method: string, path: string, options: { readonly body?: string; readonly headers?: Record<string, string> } = {}) =>
  Effect.gen(function*() {
    const base = yield* serverUrl
    return yield* Effect.promise(async () => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...(options.body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
        body: options.body
      })
      const text = await response.text()
      const json = (response.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : undefined
      return { status: response.status, headers: response.headers, text, body: json }
    })
  })
