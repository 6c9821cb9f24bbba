import { Duration, Effect, Stream } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { exchange, type OutboundError, type OutboundOptions } from "../platform/Outbound.ts"
import { LlmError } from "./Llm.ts"

/**
 * Calls to model providers: JSON over HTTP with the retry policy of
 * `platform/Outbound.ts`; `timeoutMs` also bounds every silence in a stream.
 */
export type UpstreamOptions = OutboundOptions

const llmErrorKinds: Record<OutboundError["kind"], LlmError["kind"]> = {
  rate_limited: "rate_limited",
  unavailable: "upstream",
  credentials: "upstream",
  rejected: "invalid_request"
}

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
): Effect.Effect<A, LlmError> =>
  exchange(
    client,
    HttpClientRequest.post(options.url, { headers: options.headers }).pipe(HttpClientRequest.bodyJsonUnsafe(options.body)),
    { ...options, service: options.provider }
  ).pipe(
    Effect.catchTag("OutboundError", (error) =>
      Effect.fail(new LlmError({ kind: llmErrorKinds[error.kind], message: error.message })))
  )

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
