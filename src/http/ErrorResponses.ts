import { ByteSize, Cause, Effect, Layer, Option, Result } from "effect"
import { HttpIncomingMessage, HttpMethod, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { AppConfig } from "../platform/AppConfig.ts"
import { statusMessages } from "../platform/Errors.ts"
import { randomBytes } from "node:crypto"

/**
 * The one global middleware that makes every response follow the error
 * contract: whatever fails — a request that does not decode, an unknown route,
 * an oversized or mis-typed body, a defect — answers `{"error": "..."}` with a
 * status from the spec's table, and every response carries `X-Request-Id`.
 */
const errorBody = (status: number, error: string) =>
  HttpServerResponse.jsonUnsafe({ error }, { status })

const schemaErrorLocation: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Params: "path parameter",
  Headers: "header",
  Query: "query parameter",
  Body: "request body",
  Payload: "request body",
  ResponseHeaders: "response header"
}

/** What the schema decoder reports for a field the schema does not declare (`onExcessProperty: "error"`). */
const excessProperty = "Expected no excess property"

/** `Expected string\n  at ["nested"]["name"]` → `Invalid request body field "nested.name": Expected string`. */
export const describeSchemaError = (error: HttpApiError.HttpApiSchemaError): string =>
  describeSchemaMessage(schemaErrorLocation[error.kind], error.cause.message)

/** A schema failure's message (`Expected string\n  at ["name"]`) as `Invalid <location> field "name": Expected string`. */
export const describeSchemaMessage = (location: string, message: string): string => {
  const lines = message.split("\n").map((line) => line.trim()).filter((line) => line.length > 0)
  const path = lines.find((line) => line.startsWith("at "))
  const expectation = lines.filter((line) => !line.startsWith("at ")).join("; ")
  if (path === undefined) return `Invalid ${location}: ${expectation}`
  const field = [...path.matchAll(/\[("(?:[^"\\]|\\.)*"|\d+)\]/g)]
    .map(([, segment]) => (segment.startsWith("\"") ? JSON.parse(segment) : segment))
    .join(".")
  return expectation === excessProperty ? `Unknown field "${field}"` : `Invalid ${location} field "${field}": ${expectation}`
}

/** A failure of Node's HTTP parser: `code` names it (`HPE_HEADER_OVERFLOW`…), `reason` explains it. */
export interface ParserError extends Error {
  readonly code?: string
  readonly reason?: string
}

/** What a failure of Node's HTTP parser (its `clientError`, see `NodeServer.ts`) means to a client. */
export const describeParserError = (error: ParserError): string => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return "Request headers or URL too large"
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADERS_TIMEOUT":
      return "Request timed out: it arrived too slowly"
    default:
      return typeof error.reason === "string" && error.reason !== "" ? `Malformed request: ${error.reason}` : "Malformed request"
  }
}

/**
 * The server error behind a failure: typed, or a defect when the HttpApi
 * decoder could not read the body (too large, aborted) and died with it.
 */
const httpServerErrorOf = (cause: Cause.Cause<unknown>): HttpServerError.HttpServerError | undefined => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure) && HttpServerError.isHttpServerError(failure.value)) return failure.value
  const defect = Cause.findDefect(cause)
  return Result.isSuccess(defect) && HttpServerError.isHttpServerError(defect.success) ? defect.success : undefined
}

const fromCause = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) {
    if (HttpApiError.HttpApiSchemaError.is(defect.success) && defect.success.kind !== "Body") {
      return Effect.succeed(errorBody(400, describeSchemaError(defect.success)))
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(defect.success)) {
      return Effect.succeed(errorBody(400, `Request body too large: ${defect.success.message}`))
    }
  }
  const serverError = httpServerErrorOf(cause)
  if (serverError !== undefined) {
    const reason = serverError.reason
    if (reason._tag === "RouteNotFound") {
      return Effect.succeed(errorBody(404, `No route for ${request.method} ${request.url.split("?")[0]}`))
    }
    if (reason._tag === "RequestParseError") {
      return Effect.succeed(
        errorBody(400, reason.reason === "BodyTooLarge" ? "Request body too large" : "Malformed request body")
      )
    }
  }
  return Effect.as(
    Effect.logError("Unhandled failure", { method: request.method, path: request.url.split("?")[0], cause }).pipe(
      Effect.annotateLogs({ requestId })
    ),
    errorBody(500, statusMessages[500])
  )
}

/** Framework responses without our body (415 wrong content type, 413 too large, …) become `{error}`. */
const normalize = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status < 400) return response
  if (response.status === 415) return errorBody(400, "Unsupported Content-Type: send application/json")
  if (response.status === 413) return errorBody(400, "Request body too large")
  if (response.body._tag === "Empty" || response.headers["content-type"] !== "application/json") {
    const status = response.status in statusMessages ? response.status : 400
    return errorBody(status, statusMessages[status])
  }
  return response
}

const validRequestId = /^[A-Za-z0-9._:-]{1,128}$/

/** Request ids: a random per-process prefix and a counter — unique, and cheap on the hot path. */
const processPrefix = `req_${randomBytes(6).toString("hex")}`
let requestCounter = 0
export const nextRequestId = () => `${processPrefix}_${(requestCounter++).toString(36)}`

/** Deeper JSON than this answers 400: decoders and storage walk documents recursively. */
export const maxJsonDepth = 64

/** Whether a JSON text nests deeper than `limit`, counted over its brackets outside strings, without parsing. */
const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === 92) index++ // a backslash escapes the next character
      else if (code === 34) inString = false
    } else if (code === 34) inString = true
    else if (code === 91 || code === 123) {
      if (++depth > limit) return true
    } else if (code === 93 || code === 125) depth--
  }
  return false
}

/** Why PostgreSQL could not store a string: a NUL, or a lone UTF-16 surrogate (not valid Unicode). */
const unstorable = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "Text must not contain NUL characters (U+0000)"
    : text.isWellFormed()
    ? undefined
    : "Text must not contain lone UTF-16 surrogates (\\uD800-\\uDFFF without their pair)"

/** The first unstorable string of a parsed JSON document, keys included; its depth is already bounded. */
const firstUnstorable = (value: unknown): string | undefined => {
  if (typeof value === "string") return unstorable(value)
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const reason = unstorable(key) ?? firstUnstorable(item)
    if (reason !== undefined) return reason
  }
  return undefined
}

/** Only an escape (`\u0000`, `\uD800`…) can put a NUL or a lone surrogate into a UTF-8 JSON text. */
const suspiciousEscape = /\\u(?:0000|[dD][89a-fA-F])/

const refused = (error: string) => Effect.succeed(errorBody(400, error))

/**
 * Input the storage cannot hold or the runtime cannot walk is refused up
 * front, alike on every backend, instead of failing deep inside a decoder or
 * a query as a 500: a NUL in the URL; in a JSON body, nesting deeper than
 * `maxJsonDepth`, a NUL or a lone surrogate. The body is read once; the
 * decoder reuses it.
 */
const refusingUnstorableInput = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => {
  if (request.url.includes("%00")) return refused("Text must not contain NUL characters (U+0000)")
  const contentType = request.headers["content-type"]
  if (!HttpMethod.hasBody(request.method) || (contentType !== undefined && !contentType.includes("json"))) return app
  return Effect.flatMap(request.text, (text) => {
    if (nestsDeeperThan(text, maxJsonDepth)) return refused(`JSON must not nest deeper than ${maxJsonDepth} levels`)
    if (!suspiciousEscape.test(text)) return app
    let document: unknown
    try {
      document = JSON.parse(text)
    } catch {
      return app
    }
    const reason = firstUnstorable(document)
    return reason === undefined ? app : refused(reason)
  })
}

/**
 * The largest request body the service reads (`MAX_BODY_BYTES`), for every
 * request: provided once with the server rather than per request.
 */
export const MaxBodySizeLive = Layer.unwrap(AppConfig.useSync((config) =>
  Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.maxBodyBytes))
))

export const ErrorResponsesLive = HttpRouter.middleware((app) =>
  HttpServerRequest.HttpServerRequest.use((request) => {
    const incoming = request.headers["x-request-id"]
    const requestId = incoming !== undefined && validRequestId.test(incoming) ? incoming : nextRequestId()
    return refusingUnstorableInput(request, app).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : fromCause(cause, request, requestId)
      ),
      Effect.map((response) => HttpServerResponse.setHeader(normalize(response), "x-request-id", requestId))
    )
  }), { global: true })
