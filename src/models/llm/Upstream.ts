import { Effect, Stream } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { exchange, type OutboundError, type OutboundOptions } from "../../platform/Outbound.ts"
import { mapChunks } from "../../platform/Streams.ts"
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

/** undici's failure when body data stopped arriving for longer than the dispatcher's `bodyTimeout`. */
const isBodyTimeout = (cause: unknown) =>
  typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === "UND_ERR_BODY_TIMEOUT"

/**
 * The server-sent events of a streaming response (parsed by
 * `eventsource-parser`), a chunk of events for each chunk of bytes. A
 * provider silent for longer than `timeoutMs` fails the stream: the
 * providers' HTTP client bounds every wait for body data (`LlmLive`).
 */
export const sseEvents = (
  provider: string,
  response: HttpClientResponse.HttpClientResponse,
  timeoutMs: number
): Stream.Stream<EventSourceMessage, LlmError> =>
  mapChunks(
    Stream.mapError(response.stream, (error) =>
      new LlmError({
        kind: "upstream",
        message: isBodyTimeout(error.reason.cause)
          ? `${provider} stream was silent for ${timeoutMs} ms`
          : `${provider} stream broke: ${error.message}`
      })),
    () => {
      const decoder = new TextDecoder()
      const parsed: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (event) => void parsed.push(event) })
      return {
        chunk: (pieces) =>
          Effect.sync(() => {
            for (const piece of pieces) parser.feed(decoder.decode(piece, { stream: true }))
            return parsed.splice(0)
          })
      }
    }
  )
