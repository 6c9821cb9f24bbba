import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { exchange, OutboundError, outboundClient } from "../../platform/Outbound.ts"
import { JobsConfig } from "./JobsConfig.ts"

/** A job-search provider's answer: its JSON object, passed on as is. */
export type JobResults = Readonly<Record<string, unknown>>

/**
 * The SerpApi-compatible search provider at `SERPAPI_BASE_URL`, with the
 * outbound retry policy: job search asks its `google_jobs` engine, content
 * research its `google` engine. Not configured when `SERPAPI_API_KEY` is unset.
 */
export class JobProvider extends Context.Service<JobProvider, {
  readonly configured: boolean
  /** Searches one engine (`google_jobs`, `google`) with the provider's own parameter names (`q`, `gl`, `next_page_token`, …). */
  readonly search: (engine: string, parameters: Readonly<Record<string, string>>) => Effect.Effect<JobResults, OutboundError>
}>()("jobs/JobProvider") {
  static readonly layer = Layer.effect(
    JobProvider,
    Effect.gen(function*() {
      const settings = yield* JobsConfig
      const client = yield* HttpClient.HttpClient
      const endpoint = new URL("search.json", settings.baseUrl.endsWith("/") ? settings.baseUrl : `${settings.baseUrl}/`)
      return {
        configured: Option.isSome(settings.apiKey),
        search: (engine, parameters) => {
          const apiKey = Option.match(settings.apiKey, { onNone: () => "", onSome: Redacted.value })
          const request = HttpClientRequest.get(endpoint.toString()).pipe(
            HttpClientRequest.setUrlParams({ ...parameters, engine, api_key: apiKey }),
            HttpClientRequest.acceptJson
          )
          return exchange(client, request, {
            service: "The search provider",
            timeoutMs: settings.timeoutMs,
            maxRetries: settings.maxRetries,
            read: readResults
          })
        }
      }
    })
  ).pipe(Layer.provide(outboundClient(NodeHttpClient.layerDispatcher)))
}

const readResults = (response: HttpClientResponse.HttpClientResponse) =>
  response.json.pipe(
    Effect.mapError(() => unreadable),
    Effect.flatMap((body) =>
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? Effect.succeed(body as JobResults)
        : Effect.fail(unreadable)
    )
  )

const unreadable = new OutboundError({ kind: "unavailable", message: "The search provider sent an unreadable answer" })
