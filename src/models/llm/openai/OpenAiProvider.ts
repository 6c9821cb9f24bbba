import { Effect, Redacted, Result, Schema, Stream } from "effect"
import type { HttpClient } from "effect/http"
import { mapChunks, prepend } from "../../../platform/Streams.ts"
import { type CatalogModel, type EmbeddingRequest, type LlmRequest, LlmError, type LlmStreamEvent } from "../Llm.ts"
import type { Provider } from "../Provider.ts"
import { tokenCounter } from "../Tokenizer.ts"
import { postJson, readJson, sseEvents, type UpstreamOptions } from "../Upstream.ts"
import { chunkDecoder } from "./Chunks.ts"
import { fromChatCompletion, toChatRequest } from "./Translate.ts"
import * as Wire from "./Wire.ts"

/**
 * The `openai` provider: any OpenAI-compatible chat-completions server
 * (OpenAI, Ollama, vLLM, llama.cpp) at `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`), with `OPENAI_API_KEY` as bearer token when set.
 */

export interface OpenAiSettings extends UpstreamOptions {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

const name = "OpenAI-compatible upstream"

const unexpected = (what: string) => (error: Schema.SchemaError) =>
  new LlmError({ kind: "upstream", message: `${name} sent an unexpected ${what}: ${error.message.split("\n")[0]}` })

const decodeCompletion = Schema.decodeUnknownEffect(Wire.ChatCompletion)
const decodeEmbeddings = Schema.decodeUnknownEffect(Wire.EmbeddingList)
const decodeChunk = Schema.decodeUnknownResult(Wire.ChatCompletionChunk)

/** A `data:` payload of an upstream stream: a chunk, or the error the upstream reported mid-stream. */
const chunkOf = (data: string): Result.Result<Wire.ChatCompletionChunk, LlmError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(data)
  } catch {
    return Result.fail(new LlmError({ kind: "upstream", message: `${name} sent a chunk that is not JSON` }))
  }
  const error = (parsed as { error?: { message?: unknown } | string } | null)?.error
  if (error !== undefined) {
    const message = typeof error === "string" ? error : String(error?.message ?? "unknown error")
    return Result.fail(new LlmError({ kind: "upstream", message: `${name} failed mid-stream: ${message}` }))
  }
  return Result.mapError(decodeChunk(parsed), unexpected("chunk"))
}

export const makeOpenAiProvider = (client: HttpClient.HttpClient, settings: OpenAiSettings): Provider => {
  const base = settings.baseUrl.replace(/\/+$/, "")
  const url = `${base}/chat/completions`
  const headers: Record<string, string> = settings.apiKey === undefined
    ? {}
    : { authorization: `Bearer ${Redacted.value(settings.apiKey)}` }
  const post = <A>(request: LlmRequest, model: CatalogModel, stream: boolean, read: Parameters<typeof postJson<A>>[1]["read"]) =>
    postJson(client, {
      ...settings,
      provider: name,
      url,
      headers,
      body: toChatRequest(request, model.upstream, stream),
      read
    })

  const generate = Effect.fnUntraced(function*(request: LlmRequest, model: CatalogModel) {
    const json = yield* post(request, model, false, readJson(name))
    const wire = yield* Effect.mapError(decodeCompletion(json), unexpected("completion"))
    const response = fromChatCompletion(wire, model.id)
    if (wire.usage) return response
    const counter = yield* tokenCounter
    const generated = response.content.map((part) => (part.type === "text" ? part.text : JSON.stringify(part))).join("")
    return { ...response, usage: yield* counter.estimate(request, generated) }
  })

  /** Texts embedded by the upstream's `/embeddings`, as floats (every compatible server speaks that). */
  const embed = Effect.fnUntraced(function*(request: EmbeddingRequest, model: CatalogModel) {
    const dimensions = request.dimensions ?? model.dimensions
    const json = yield* postJson(client, {
      ...settings,
      provider: name,
      url: `${base}/embeddings`,
      headers,
      body: { model: model.upstream, input: request.input, encoding_format: "float", dimensions, user: request.user },
      read: readJson(name)
    })
    const wire = yield* Effect.mapError(decodeEmbeddings(json), unexpected("embeddings answer"))
    const embeddings = wire.data.toSorted((a, b) => a.index - b.index).map((item) => item.embedding)
    if (embeddings.length !== request.input.length || embeddings.some((vector) => typeof vector === "string")) {
      return yield* new LlmError({ kind: "upstream", message: `${name} answered ${embeddings.length} float embeddings for ${request.input.length} inputs` })
    }
    const counter = yield* tokenCounter
    const inputTokens = wire.usage?.prompt_tokens ?? (yield* Effect.forEach(request.input, counter.text)).reduce((a, b) => a + b, 0)
    return { model: model.id, embeddings: embeddings as ReadonlyArray<ReadonlyArray<number>>, inputTokens }
  })

  return {
    generate,
    embed,
    stream: (request, model) =>
      Stream.unwrap(Effect.map(post(request, model, true, Effect.succeed), (response) => {
        const events = mapChunks(sseEvents(name, response, settings.timeoutMs), () => {
          const decoder = chunkDecoder()
          const finish = Effect.flatMap(tokenCounter, (counter) => decoder.finish((generated) => counter.estimate(request, generated)))
          let finished = false
          const finishing = (events: Array<LlmStreamEvent>) =>
            Effect.suspend(() => {
              finished = true
              return Effect.map(finish, (last) => [...events, last])
            })
          return {
            chunk: (messages) => {
              const events: Array<LlmStreamEvent> = []
              // After `[DONE]` the body is read to its end, so that the connection is kept for the next call.
              if (finished) return Effect.succeed(events)
              for (const message of messages) {
                // `[DONE]` ends the answer: the closing event goes out with what came before it.
                if (message.data === "[DONE]") return finishing(events)
                const chunk = chunkOf(message.data)
                if (Result.isFailure(chunk)) return Effect.fail(chunk.failure)
                events.push(...decoder.decode(chunk.success))
              }
              return Effect.succeed(events)
            },
            // The provider closed without `[DONE]`: the answer ends anyway.
            end: Effect.suspend(() => (finished ? Effect.succeed([]) : finishing([])))
          }
        })
        return prepend(events, [{ type: "start" as const, model: model.id }])
      }))
  }
}
