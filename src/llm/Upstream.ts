import { Duration, Effect, Schedule, Stream } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { LlmError } from "./Llm.ts"

/**
 * Outbound calls to model providers: JSON over HTTP, retried on 429, 5xx,
 * network failures and timeouts with exponential backoff and jitter (a
 * bounded number of times), never on another 4xx; each attempt is bounded
 * by the configured timeout.
 */

export interface UpstreamOptions {
  /** Bounds one attempt until the response (non-streaming: its whole body) arrives, and every silence in a stream. */
  readonly timeoutMs: number
  /** Retries after the first attempt. */
  readonly maxRetries: number
}

/** A failed attempt and whether another may succeed. */
class AttemptFailed {
  readonly retryable: boolean
  readonly error: LlmError
  constructor(retryable: boolean, error: LlmError) {
    this.retryable = retryable
    this.error = error
  }
}

const retrySchedule = Schedule.exponential("250 millis", 2).pipe(Schedule.jittered)

/** The message a provider put in its error body, whichever shape it used. */
const errorMessage = (body: string): string => {
  try {
    const parsed = JSON.parse(body)
    const error = parsed?.error
    if (typeof error === "string") return error
    if (typeof error?.message === "string") return error.message
    if (typeof parsed?.message === "string") return parsed.message
  } catch {
    // not JSON: the raw text, shortened, is the best description
  }
  return body.slice(0, 500)
}

const refusal = (provider: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(Effect.orElseSucceed(response.text, () => ""), (body) => {
    const message = errorMessage(body)
    const status = response.status
    if (status === 429) {
      return Effect.fail(new AttemptFailed(true, new LlmError({ kind: "rate_limited", message: `${provider} is rate limiting: ${message}` })))
    }
    if (status >= 500) {
      return Effect.fail(new AttemptFailed(true, new LlmError({ kind: "upstream", message: `${provider} failed (${status}): ${message}` })))
    }
    if (status === 401 || status === 403) {
      // The platform's provider credentials are wrong: not the client's fault.
      return Effect.fail(new AttemptFailed(false, new LlmError({ kind: "upstream", message: `${provider} refused the platform's credentials (${status})` })))
    }
    return Effect.fail(new AttemptFailed(false, new LlmError({ kind: "invalid_request", message: `${provider}: ${message}` })))
  })

/**
 * POSTs `body` as JSON and hands a successful response to `read`, which runs
 * inside the attempt (so a non-streaming read is bounded by the timeout too).
 */
export const postJson = <A>(
  client: HttpClient.HttpClient,
  options: UpstreamOptions & {
    readonly provider: string
    readonly url: string
    readonly headers: Record<string, string>
    readonly body: unknown
    readonly read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, LlmError>
  }
): Effect.Effect<A, LlmError> => {
  const request = HttpClientRequest.post(options.url, { headers: options.headers }).pipe(
    HttpClientRequest.bodyJsonUnsafe(options.body)
  )
  const attempt = client.execute(request).pipe(
    Effect.mapError((error) =>
      new AttemptFailed(true, new LlmError({ kind: "upstream", message: `${options.provider} unreachable: ${error.message}` }))
    ),
    Effect.flatMap((response) =>
      response.status >= 200 && response.status < 300
        ? Effect.mapError(options.read(response), (error) => new AttemptFailed(false, error))
        : refusal(options.provider, response)
    ),
    Effect.timeoutOrElse({
      duration: Duration.millis(options.timeoutMs),
      orElse: () =>
        Effect.fail(new AttemptFailed(true, new LlmError({ kind: "upstream", message: `${options.provider} did not answer within ${options.timeoutMs} ms` })))
    })
  )
  return attempt.pipe(
    Effect.retry({ schedule: retrySchedule, times: options.maxRetries, while: (failure) => failure.retryable }),
    Effect.mapError((failure) => failure.error)
  )
}

/** The parsed JSON body of a response. */
export const readJson = (provider: string) => (response: HttpClientResponse.HttpClientResponse) =>
  Effect.mapError(response.json, (error) => new LlmError({ kind: "upstream", message: `${provider} sent an unreadable body: ${error.message}` }))

/**
 * The server-sent events of a streaming response (parsed by
 * `eventsource-parser`), failing when the provider stays silent longer than
 * the timeout.
 */
export const sseEvents = (
  provider: string,
  response: HttpClientResponse.HttpClientResponse,
  timeoutMs: number
): Stream.Stream<EventSourceMessage, LlmError> =>
  Stream.suspend(() => {
    const parsed: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (event) => void parsed.push(event) })
    return response.stream.pipe(
      Stream.decodeText,
      Stream.map((text) => {
        parser.feed(text)
        return parsed.splice(0)
      }),
      Stream.flattenIterable,
      Stream.mapError((error) => new LlmError({ kind: "upstream", message: `${provider} stream broke: ${error.message}` })),
      Stream.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () => Stream.fail(new LlmError({ kind: "upstream", message: `${provider} stream was silent for ${timeoutMs} ms` }))
      })
    )
  })
