import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest, HttpServer } from "effect/http"

/**
 * Raw HTTP against the test server, for what the typed client cannot express:
 * malformed bodies, wrong content types, unknown routes, missing headers.
 */
export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The parsed JSON body, undefined when the body is not JSON. */
  readonly body: unknown
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const send = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(request)
    const text = yield* response.text
    const raw: RawResponse = { status: response.status, headers: response.headers, text, body: parseJson(text) }
    return raw
  }).pipe(Effect.orDie)

/** The error contract: `application/json`, exactly `{"error": "<message>"}`, with the given status. */
export const expectErrorResponse = (response: RawResponse, status: number, message?: string | RegExp) => {
  expect(response.status).toBe(status)
  expect(response.headers["content-type"]).toBe("application/json")
  expect(Object.keys(response.body as object)).toEqual(["error"])
  const error = (response.body as { readonly error: unknown }).error
  expect(typeof error).toBe("string")
  if (message !== undefined) expect(error).toMatch(message)
}

/**
 * POST of a body exactly as given, with the key in `X-API-Key`: for bodies the
 * typed client would refuse to encode.
 */
export const postJson = (path: string, body: unknown, apiKey?: string) => {
  const request = HttpClientRequest.post(path).pipe(HttpClientRequest.bodyText(JSON.stringify(body), "application/json"))
  return apiKey === undefined ? request : HttpClientRequest.setHeader(request, "x-api-key", apiKey)
}

/** GET with the key in `X-API-Key`: for query strings the typed client would refuse to encode. */
export const getWithKey = (path: string, apiKey: string) =>
  HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("x-api-key", apiKey))

/** Any method, with a JSON body exactly as given (none when undefined) and the key in `X-API-Key`. */
export const requestWithKey = (
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  apiKey: string,
  body?: unknown
) => {
  const request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.setHeader("x-api-key", apiKey))
  return body === undefined ? request : HttpClientRequest.bodyText(request, JSON.stringify(body), "application/json")
}

/**
 * GET `path` on the test server, never following a redirect (the global
 * `fetch` with `redirect: "manual"`): the status and where it points.
 */
export const getRedirect = (path: string) =>
  Effect.flatMap(HttpServer.HttpServer, (server) => {
    const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
    return Effect.promise(() =>
      fetch(`http://127.0.0.1:${port}${path}`, { redirect: "manual" }).then(async (response) => {
        await response.arrayBuffer()
        return { status: response.status, location: response.headers.get("location") }
      })
    )
  })
