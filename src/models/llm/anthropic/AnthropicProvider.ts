import { Effect, Redacted, Result, Schema, Stream } from "effect"
import type { HttpClient } from "effect/http"
import { mapChunks } from "../../../platform/Streams.ts"
import { type CatalogModel, type LlmRequest, LlmError, type LlmStreamEvent } from "../Llm.ts"
import { noEmbeddings, type Provider, withoutOpenAiOnlyFeatures } from "../Provider.ts"
import { postJson, readJson, sseEvents, type UpstreamOptions } from "../Upstream.ts"
import { eventDecoder, fromMessage, toMessagesRequest } from "./Translate.ts"
import * as Wire from "./Wire.ts"

/**
 * The `anthropic` provider: the Messages API at `ANTHROPIC_BASE_URL`
 * (default `https://api.anthropic.com`) with `ANTHROPIC_API_KEY`.
 */

export interface AnthropicSettings extends UpstreamOptions {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

const name = "Anthropic upstream"

const unexpected = (what: string) => (error: Schema.SchemaError) =>
  new LlmError({ kind: "upstream", message: `${name} sent an unexpected ${what}: ${error.message.split("\n")[0]}` })

const decodeMessage = Schema.decodeUnknownEffect(Wire.MessageResponse)
const decodeEvent = Schema.decodeUnknownResult(Wire.StreamEvent)

/** Upstream events the stream translates; `ping` and event types added later are skipped. */
const translatedEvents = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "error"
])

const parseEvent = (data: string): Result.Result<Wire.StreamEvent, LlmError> => {
  try {
    return Result.mapError(decodeEvent(JSON.parse(data)), unexpected("event"))
  } catch {
    return Result.fail(new LlmError({ kind: "upstream", message: `${name} sent an event that is not JSON` }))
  }
}

export const makeAnthropicProvider = (client: HttpClient.HttpClient, settings: AnthropicSettings): Provider => {
  const url = `${settings.baseUrl.replace(/\/+$/, "")}/v1/messages`
  const headers: Record<string, string> = {
    "anthropic-version": "2023-06-01",
    ...(settings.apiKey === undefined ? {} : { "x-api-key": Redacted.value(settings.apiKey) })
  }
  const post = <A>(request: LlmRequest, model: CatalogModel, stream: boolean, read: Parameters<typeof postJson<A>>[1]["read"]) =>
    Effect.andThen(
      withoutOpenAiOnlyFeatures(request, model),
      postJson(client, { ...settings, provider: name, url, headers, body: toMessagesRequest(request, model.upstream, stream), read })
    )
  return {
    embed: noEmbeddings("Anthropic"),
    generate: (request, model) =>
      Effect.gen(function*() {
        const json = yield* post(request, model, false, readJson(name))
        const wire = yield* Effect.mapError(decodeMessage(json), unexpected("message"))
        return fromMessage(wire, model.id)
      }),
    stream: (request, model) =>
      Stream.unwrap(Effect.map(post(request, model, true, Effect.succeed), (response) => {
        const decode = eventDecoder(model.id)
        return mapChunks(sseEvents(name, response, settings.timeoutMs), () => ({
          chunk: (messages) => {
            const events: Array<LlmStreamEvent> = []
            for (const message of messages) {
              if (message.event === undefined || !translatedEvents.has(message.event)) continue
              const decoded = Result.flatMap(parseEvent(message.data), (parsed) =>
                Result.mapError(decode(parsed), (reason) => new LlmError({ kind: "upstream", message: `${name} failed mid-stream: ${reason}` })))
              if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
              events.push(...decoded.success)
            }
            return Effect.succeed(events)
          }
        }))
      }))
  }
}
