import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, type HttpClientRequest } from "effect/http"

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
