import { Schema, Stream } from "effect"
import { eventEncoder, ping } from "../llm/anthropic/Translate.ts"
import type { LlmError, LlmStreamEvent } from "../llm/Llm.ts"
import { chunkEncoder } from "../llm/openai/Translate.ts"

/**
 * The gateway's streams on the wire. A stream that fails after its 200 was
 * sent reports the failure in-band, in the shape that wire's SDKs read.
 */

/** One server-sent event; `message` events are written without an `event:` line. */
export const SseEvent = Schema.Struct({ event: Schema.String, data: Schema.String }).annotate({ identifier: "SseEvent" })

export type SseEvent = typeof SseEvent.Type

/** Anthropic's error types, which OpenAI's in-band errors reuse. */
const errorType: Record<LlmError["kind"], string> = {
  invalid_request: "invalid_request_error",
  rate_limited: "rate_limit_error",
  upstream: "api_error"
}

const message = (data: unknown): SseEvent => ({ event: "message", data: JSON.stringify(data) })

/** Chat completions: `data: {chunk}` events, then `data: [DONE]`. */
export const chatCompletionEvents = (
  events: Stream.Stream<LlmStreamEvent, LlmError>,
  options: Parameters<typeof chunkEncoder>[0]
): Stream.Stream<SseEvent> => {
  const encode = chunkEncoder(options)
  return events.pipe(
    Stream.map((event) => encode(event).map(message)),
    Stream.flattenIterable,
    Stream.concat(Stream.make({ event: "message", data: "[DONE]" })),
    Stream.catch((error) => Stream.make(message({ error: { message: error.message, type: errorType[error.kind] } })))
  )
}

/** How often a messages stream pings while it waits. */
export const keepAliveInterval = "10 seconds"

const named = (event: { readonly event: string; readonly data: unknown }): SseEvent => ({
  event: event.event,
  data: JSON.stringify(event.data)
})

/** Messages: Anthropic's event sequence, `ping` after `message_start` and every 10 s until the end. */
export const messageEvents = (events: Stream.Stream<LlmStreamEvent, LlmError>, id: string): Stream.Stream<SseEvent> => {
  const encode = eventEncoder(id)
  const rendered = events.pipe(
    Stream.map((event) => encode(event).map(named)),
    Stream.flattenIterable,
    Stream.catch((error) =>
      Stream.make(named({ event: "error", data: { type: "error", error: { type: errorType[error.kind], message: error.message } } }))
    )
  )
  const keepAlive = Stream.tick(keepAliveInterval).pipe(Stream.drop(1), Stream.map(() => named(ping)))
  return Stream.merge(rendered, keepAlive, { haltStrategy: "left" })
}
