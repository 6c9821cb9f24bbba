import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

/**
 * A request the typed client would refuse to send (it validates payloads
 * before sending): for checking what the server answers to bad input.
 */
export const rawRequest = (
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  options: { readonly apiKey: string; readonly companyId?: string; readonly body?: unknown }
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const request = HttpClientRequest.make(method)(path).pipe(
      HttpClientRequest.setHeaders({
        "x-api-key": options.apiKey,
        ...(options.companyId === undefined ? {} : { "x-company-id": options.companyId })
      }),
      (request) => options.body === undefined ? request : HttpClientRequest.bodyJsonUnsafe(request, options.body)
    )
    const response = yield* http.execute(request)
    const body = (yield* response.json) as { readonly error?: string }
    return { status: response.status, body }
  }).pipe(Effect.orDie)
