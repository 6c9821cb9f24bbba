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
  return `Invalid ${location} field "${field}": ${expectation}`
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
const nextRequestId = () => `${processPrefix}_${(requestCounter++).toString(36)}`

const holdsNul = (value: unknown): boolean =>
  typeof value === "string"
    ? value.includes("\u0000")
    : typeof value === "object" && value !== null
    ? Object.entries(value).some(([key, item]) => key.includes("\u0000") || holdsNul(item))
    : false

const nulRefused = () => errorBody(400, "Text must not contain NUL characters (U+0000)")

/**
 * PostgreSQL text cannot hold U+0000: a NUL in the URL or in a JSON body is
 * refused up front, alike on every storage backend, instead of failing deep
 * inside a query as a 500. The body is read once; the decoder reuses it.
 */
const refusingNul = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => {
  if (request.url.includes("%00")) return Effect.succeed(nulRefused())
  const contentType = request.headers["content-type"]
  if (!HttpMethod.hasBody(request.method) || (contentType !== undefined && !contentType.includes("json"))) return app
  return Effect.flatMap(request.text, (text) => {
    if (!/\\u0000/i.test(text)) return app
    try {
      return holdsNul(JSON.parse(text)) ? Effect.succeed(nulRefused()) : app
    } catch {
      return app
    }
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
    return refusingNul(request, app).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : fromCause(cause, request, requestId)
      ),
      Effect.map((response) => HttpServerResponse.setHeader(normalize(response), "x-request-id", requestId))
    )
  }), { global: true })
