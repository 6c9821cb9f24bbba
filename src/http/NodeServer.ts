import { NodeHttpServer } from "@effect/platform-node"
import { Duration } from "effect"
import { createServer, type RequestListener, type Server } from "node:http"
import type { Duplex } from "node:stream"
import type { AppSettings } from "../platform/AppConfig.ts"
import { describeParserError, nextRequestId, type ParserError } from "./ErrorResponses.ts"

/**
 * The Node HTTP server under the service, hardened against what never reaches
 * a handler: requests Node's parser rejects (oversized headers or URL,
 * malformed framing) answer 400 with the `{error}` body and an `X-Request-Id`
 * like every other error; slow clients are cut off (headers, whole request,
 * idle keep-alive); open connections are capped.
 */

/** A socket Node is still serving a response on: its headers may already be out. */
interface ServedSocket extends Duplex {
  readonly _httpMessage?: { readonly headersSent?: boolean } | null
}

/** Answers a request Node's parser refused, as Node itself would, but with our error contract. */
const answerClientError = (error: ParserError, socket: ServedSocket) => {
  if (!socket.writable || socket._httpMessage?.headersSent === true || error.code === "ECONNRESET") {
    socket.destroy()
    return
  }
  const body = JSON.stringify({ error: describeParserError(error) })
  socket.end([
    "HTTP/1.1 400 Bad Request",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${nextRequestId()}`,
    "Connection: close",
    "",
    body
  ].join("\r\n"))
}

export const hardenedServer = (settings: AppSettings): Server => {
  const headersTimeout = Math.min(settings.headersTimeoutMs, settings.requestTimeoutMs)
  const server = createServer({
    headersTimeout,
    requestTimeout: settings.requestTimeoutMs,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    // How often Node looks for requests past their timeouts: often enough for the shortest one.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4)))
  })
  server.maxConnections = settings.maxConnections
  server.on("clientError", answerClientError)
  holdEarlyRequests(server)
  return server
}

/**
 * The platform's server listens before the service attaches its request
 * handler, and a request arriving in between would never be answered
 * (Node drops a `request` event nobody listens to). Such requests wait here
 * and go to the handler as it is attached.
 */
const holdEarlyRequests = (server: Server) => {
  const early: Array<Parameters<RequestListener>> = []
  const hold: RequestListener = (request, response) => void early.push([request, response])
  const onListener = (event: string | symbol, listener: RequestListener) => {
    if (event !== "request" || listener === hold) return
    server.off("newListener", onListener)
    server.off("request", hold)
    // `newListener` comes before the listener is added: hand the early requests over once it is.
    queueMicrotask(() => early.splice(0).forEach(([request, response]) => listener(request, response)))
  }
  server.on("request", hold)
  server.on("newListener", onListener)
}

/** The hardened server as the service's `HttpServer`, on `listen` (port 0: any free port). */
export const nodeServer = (settings: AppSettings, listen: { readonly host?: string; readonly port: number }) =>
  NodeHttpServer.layer(() => hardenedServer(settings), {
    ...listen,
    gracefulShutdownTimeout: Duration.millis(settings.shutdownTimeoutMs)
  })
