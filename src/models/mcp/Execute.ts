import { Cause, Effect, Result, Stream } from "effect"
import type { HttpMethod, HttpRouter } from "effect/http"
import { HttpClientRequest, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import type { CallToolResult } from "./Api.ts"
import type { Operation } from "./Catalog.ts"

/**
 * `platform_execute_action`: an operation run in-process as an HTTP request
 * of the caller, handed to the same router that serves the REST API. Every
 * rule of the REST call therefore applies unchanged — authentication with the
 * caller's own headers, tenancy, roles, plan, credits, rate limits, the
 * endpoint's own schemas — and the result carries the same JSON.
 */

/** The headers that make up a caller's credentials, forwarded to the operation. */
const credentialHeaders = ["x-api-key", "authorization", "x-company-id", "x-request-id"] as const

export type CallerHeaders = Readonly<Record<string, string>>

/** The caller's credentials; a company id given as the `companyId` query travels as `X-Company-ID`. */
export const callerHeaders = (request: HttpServerRequest.HttpServerRequest): CallerHeaders => {
  const headers: Record<string, string> = {}
  for (const name of credentialHeaders) {
    const value = request.headers[name]
    if (value !== undefined) headers[name] = value
  }
  const query = request.url.indexOf("?")
  if (headers["x-company-id"] === undefined && query !== -1) {
    const companyId = new URLSearchParams(request.url.slice(query + 1)).get("companyId")
    if (companyId !== null && companyId !== "") headers["x-company-id"] = companyId
  }
  return headers
}

/** At most this many events (or bytes of a streamed body) are collected from a streaming operation. */
export const maxStreamEvents = 1_000
export const maxStreamBytes = 1_048_576

const textResult = (structured: Record<string, unknown>, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(structured) }],
  structuredContent: structured,
  ...(isError ? { isError: true } : {})
})

/** A failed action: the REST status and its `{error}` message. */
export const actionError = (status: number, error: string): CallToolResult => textResult({ status, error }, true)

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

type Scalar = string | number | boolean

const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean"

interface PlannedRequest {
  readonly url: string
  readonly body: Record<string, unknown> | undefined
}

/**
 * Where each argument goes: path parameters into the path (URL-encoded),
 * query parameters into the query, everything else into the JSON body —
 * whose own schema then judges it, as it would over REST. A body field named
 * like a path or query parameter gets the value too.
 */
export const planRequest = (operation: Operation, args: Readonly<Record<string, unknown>>): Result.Result<PlannedRequest, string> => {
  const rest = new Map(Object.entries(args))
  let path = operation.path
  for (const parameter of operation.pathParameters) {
    const value = args[parameter.name]
    if (value === undefined || value === null) {
      return Result.fail(`Missing required argument "${parameter.name}" (path parameter of ${operation.operationId})`)
    }
    if (!isScalar(value)) return Result.fail(`Argument "${parameter.name}" must be a string`)
    const text = String(value)
    if (text === "" || text === "." || text === "..") {
      return Result.fail(`Argument "${parameter.name}" must be an id, not ${JSON.stringify(text)}`)
    }
    path = path.replace(`{${parameter.name}}`, encodeURIComponent(text))
    rest.delete(parameter.name)
  }
  const query = new URLSearchParams()
  for (const parameter of operation.queryParameters) {
    const value = args[parameter.name]
    if (value === undefined || value === null) continue
    const values = Array.isArray(value) ? value : [value]
    if (!values.every(isScalar)) {
      return Result.fail(`Argument "${parameter.name}" must be a string, number or boolean (query parameter)`)
    }
    for (const item of values) query.append(parameter.name, String(item))
    rest.delete(parameter.name)
  }
  const search = query.size === 0 ? "" : `?${query.toString()}`
  if (operation.body === undefined) {
    const [unknown] = rest.keys()
    if (unknown === undefined) return Result.succeed({ url: `${path}${search}`, body: undefined })
    const known = [...operation.pathParameters, ...operation.queryParameters].map((parameter) => parameter.name)
    return Result.fail(
      `Unknown argument "${unknown}" for ${operation.operationId}: it takes ${known.length === 0 ? "no arguments" : known.join(", ")}`
    )
  }
  const fields = new Set(operation.body.fields ?? [])
  const body = Object.fromEntries(Object.entries(args).filter(([name]) => rest.has(name) || fields.has(name)))
  return Result.succeed({ url: `${path}${search}`, body })
}

const parseJson = (text: string): Result.Result<unknown, string> => {
  try {
    return Result.succeed(JSON.parse(text))
  } catch {
    return Result.fail(text)
  }
}

/** The events of a streaming answer, each `data` parsed when it is JSON, up to the limits. */
const collectEvents = (body: Stream.Stream<Uint8Array, unknown>) =>
  Effect.suspend(() => {
    // One decoder per stream: in streaming mode it keeps the bytes of a character split across chunks.
    const decoder = new TextDecoder()
    const events: Array<{ event: string; data: unknown }> = []
    const pending: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (event) => void pending.push(event) })
    let bytes = 0
    let truncated = false
    return body.pipe(
      Stream.takeUntil((chunk) => {
        bytes += chunk.byteLength
        parser.feed(decoder.decode(chunk, { stream: true }))
        for (const event of pending.splice(0)) {
          if (events.length === maxStreamEvents) break
          events.push({ event: event.event ?? "message", data: Result.getOrElse(parseJson(event.data), () => event.data) })
        }
        truncated = events.length >= maxStreamEvents || bytes >= maxStreamBytes
        return truncated
      }),
      Stream.runDrain,
      Effect.map(() => ({ events, truncated }))
    )
  })

const isTextual = (contentType: string) => contentType === "" || contentType.includes("json") || contentType.startsWith("text/")

/** The REST answer as a CallToolResult: 2xx → its JSON, structured; otherwise `isError` with status and message. */
const toResult = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.gen(function*() {
    const status = response.status
    const contentType = response.headers["content-type"] ?? ""
    const body = response.body
    if (body._tag === "Stream" && contentType.startsWith("text/event-stream")) {
      return textResult({ status, ...(yield* collectEvents(body.stream)) }, status >= 400)
    }
    if (!isTextual(contentType) || (body._tag !== "Uint8Array" && body._tag !== "Empty")) {
      return actionError(
        400,
        `The operation answered ${contentType || "a non-JSON body"}, which MCP cannot carry: fetch it over the REST API`
      )
    }
    const text = body._tag === "Empty" ? "" : new TextDecoder().decode(body.body)
    const parsed = parseJson(text)
    if (status >= 400) {
      const message = Result.isSuccess(parsed) && isRecord(parsed.success) && typeof parsed.success.error === "string"
        ? parsed.success.error
        : text
      return actionError(status, message)
    }
    const value = Result.isSuccess(parsed) ? parsed.success : text
    return {
      content: [{ type: "text" as const, text: text === "" ? "{}" : text }],
      structuredContent: isRecord(value) ? value : { result: value }
    }
  })

/** The caller's request as the router receives it; built without a Web `Request`, which costs more than the rest of the call. */
const buildRequest = (method: HttpMethod.HttpMethod, planned: PlannedRequest, caller: CallerHeaders) => {
  const request = HttpClientRequest.make(method)(`http://mcp.internal${planned.url}`, { headers: caller })
  return HttpServerRequest.fromClientRequest(
    planned.body === undefined ? request : HttpClientRequest.bodyText(request, JSON.stringify(planned.body), "application/json")
  )
}

/**
 * Runs operations through the router's own handler (with its global
 * middleware), looked up on first use so that every route is registered.
 */
export const makeExecutor = (router: HttpRouter.HttpRouter) => {
  let app: ReturnType<HttpRouter.HttpRouter["asHttpEffect"]> | undefined
  return (operation: Operation, args: Readonly<Record<string, unknown>>, caller: CallerHeaders) =>
    Result.match(planRequest(operation, args), {
      onFailure: (error) => Effect.succeed(actionError(400, error)),
      onSuccess: (planned) => {
        app ??= router.asHttpEffect()
        return Effect.provideService(app, HttpServerRequest.HttpServerRequest, buildRequest(operation.method, planned, caller)).pipe(
          Effect.flatMap(toResult),
          Effect.scoped,
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.interrupt
              : Effect.as(
                Effect.logError("MCP action failed", { operationId: operation.operationId, cause }),
                actionError(500, "Internal server error")
              )
          )
        )
      }
    })
}
