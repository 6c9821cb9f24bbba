import { Effect, Schema, Stream } from "effect"
import { Sse } from "effect/encoding"
import { HttpServerResponse } from "effect/http"
import { eventEncoder, ping } from "../llm/anthropic/Translate.ts"
import type { LlmError, LlmStreamEvent } from "../llm/Llm.ts"
import { chunkEncoder } from "../llm/openai/Chunks.ts"
import { mapChunks } from "../../platform/Streams.ts"

/**
 * The gateway's streams on the wire. A stream that fails after its 200 was
 * sent reports the failure in-band, in the shape that wire's SDKs read.
 */

/** One server-sent event; `message` events are written without an `event:` line. */
export const SseEvent = Schema.Struct({ event: Schema.String, data: Schema.String }).annotate({ identifier: "SseEvent" })

export type SseEvent = typeof SseEvent.Type

const utf8 = new TextEncoder()

/**
 * The response that writes `events` as `text/event-stream`, each chunk of
 * events in one write. The gateway renders its streams itself rather than
 * through the endpoint's schema encoding, which takes several stream stages
 * and a copy of the request's context per chunk to write the same bytes.
 */
export const sseResponse = (events: Stream.Stream<SseEvent>) =>
  HttpServerResponse.stream(
    Stream.mapArray(events, (chunk) => [
      utf8.encode(chunk.map((event) => Sse.encoder.write({ _tag: "Event", id: undefined, ...event })).join(""))
    ]),
    { contentType: "text/event-stream" }
  )

/** Anthropic's error types, which OpenAI's in-band errors reuse. */
const errorType: Record<LlmError["kind"], string> = {
  invalid_request: "invalid_request_error",
  rate_limited: "rate_limit_error",
  upstream: "api_error"
}

const message = (data: unknown): SseEvent => ({ event: "message", data: JSON.stringify(data) })

/** Chat completions: `data: {chunk}` events, then `data: [DONE]` (with the closing chunk, in one write). */
export const chatCompletionEvents = (
  events: Stream.Stream<LlmStreamEvent, LlmError>,
  options: Parameters<typeof chunkEncoder>[0]
): Stream.Stream<SseEvent> =>
  mapChunks(events, () => {
    const encode = chunkEncoder(options)
    let done = false
    const doneOnce = (): Array<SseEvent> => {
      if (done) return []
      done = true
      return [{ event: "message", data: "[DONE]" }]
    }
    return {
      chunk: (chunk) =>
        Effect.succeed(chunk.flatMap((event) => [...encode(event).map(message), ...(event.type === "finish" ? doneOnce() : [])])),
      end: Effect.sync(doneOnce)
    }
  }).pipe(
    Stream.catch((error) => Stream.make(message({ error: { message: error.message, type: errorType[error.kind] } })))
  )

/** How often a messages stream pings while it waits. */
export const keepAliveInterval = "10 seconds"

const named = (event: { readonly event: string; readonly data: unknown }): SseEvent => ({
  event: event.event,
  data: JSON.stringify(event.data)
})

/** Messages: Anthropic's event sequence, `ping` after `message_start` and every 10 s until the end. */
export const messageEvents = (events: Stream.Stream<LlmStreamEvent, LlmError>, id: string): Stream.Stream<SseEvent> => {
  const rendered = mapChunks(events, () => {
    const encode = eventEncoder(id)
    return { chunk: (chunk) => Effect.succeed(chunk.flatMap((event) => encode(event).map(named))) }
  }).pipe(
    Stream.catch((error) =>
      Stream.make(named({ event: "error", data: { type: "error", error: { type: errorType[error.kind], message: error.message } } }))
    )
  )
  const keepAlive = Stream.tick(keepAliveInterval).pipe(Stream.drop(1), Stream.map(() => named(ping)))
  return Stream.merge(rendered, keepAlive, { haltStrategy: "left" })
}
