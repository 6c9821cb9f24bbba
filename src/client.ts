import { Duration, Effect, Schedule } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "./app/Api.ts"

/**
 * The typed client for the Platform API, derived from the same Api the server
 * implements. It follows the spec's retry rules: 429 and 500 responses and
 * network failures are retried with exponential backoff and jitter (honouring
 * `Retry-After`); 400, 401, 403 and 404 never are. Errors arrive as the
 * tagged classes of `platform/Errors.ts`.
 */
export interface ClientOptions {
  readonly baseUrl: string
  /** A company API key or a personal access key. */
  readonly apiKey?: string | undefined
  /** Sent as `X-Company-ID`; required with a personal access key. */
  readonly companyId?: string | undefined
  /** Retries after the first attempt (default 4). */
  readonly retries?: number | undefined
  readonly initialDelay?: Duration.Input | undefined
}

export const retrySchedule = (initialDelay: Duration.Input = "200 millis") =>
  Schedule.exponential(initialDelay, 2).pipe(Schedule.jittered)

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) =>
          HttpClientRequest.setHeaders(request, {
            ...(options.apiKey === undefined ? {} : { "x-api-key": options.apiKey }),
            ...(options.companyId === undefined ? {} : { "x-company-id": options.companyId })
          })
        ),
        HttpClient.retryTransient({
          retryOn: "errors-and-responses",
          schedule: retrySchedule(options.initialDelay),
          times: options.retries ?? 4
        })
      )
  })

export type PlatformClient = Effect.Success<ReturnType<typeof makeClient>>
