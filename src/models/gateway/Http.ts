import { Effect, Layer, Result } from "effect"
import { AnthropicApi, ChatApi, ModelsApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { areaApi } from "../../http/Area.ts"
import { fromMessagesRequest, toMessage } from "../llm/anthropic/Translate.ts"
import { type LlmRequest, ModelCatalog, requireKnownModel } from "../llm/Llm.ts"
import type * as AnthropicWire from "../llm/anthropic/Wire.ts"
import { fromChatRequest, toChatCompletion } from "../llm/openai/Translate.ts"
import type * as OpenAiWire from "../llm/openai/Wire.ts"
import { tokenCounter } from "../llm/Tokenizer.ts"
import { newId } from "../../platform/Ids.ts"
import { BadRequest } from "../../platform/Errors.ts"
import * as Gateway from "./Gateway.ts"
import { chatCompletionEvents, messageEvents, sseResponse } from "./Sse.ts"

const api = areaApi(ModelsApi, ChatApi, AnthropicApi)

const chat = authorizedAnswer("chat:use")

/** A translated request, or 400 naming what it cannot mean. */
const canonical = (translated: Result.Result<LlmRequest, string>) =>
  Result.match(translated, {
    onSuccess: Effect.succeed,
    onFailure: (error) => Effect.fail(new BadRequest({ error: `Invalid request body: ${error}` }))
  })

const nowSeconds = () => Math.floor(Date.now() / 1000)

export const ModelsLive = HttpApiBuilder.group(api, "models", (handlers) =>
  Effect.gen(function*() {
    const { models } = yield* ModelCatalog
    const created = nowSeconds()
    const list = {
      object: "list" as const,
      data: models.map((model) => ({ id: model.id, object: "model" as const, created, owned_by: model.provider }))
    }
    return handlers.handle("list", () => chat(Effect.succeed(list)))
  }))

// Handlers are generator functions made once: a generator function made per request would keep
// that request alive until a full collection (docs/operations.md, "Generator functions made per request").
const createCompletion = Effect.fnUntraced(function*(payload: OpenAiWire.ChatCompletionRequest) {
  const request = yield* canonical(fromChatRequest(payload))
  const created = nowSeconds()
  if (payload.stream === true) {
    const events = yield* Gateway.openStream(request)
    return sseResponse(chatCompletionEvents(events, {
      id: newId("chatcmpl"),
      created,
      choices: request.n ?? 1,
      includeUsage: payload.stream_options?.include_usage === true
    }))
  }
  return toChatCompletion(yield* Gateway.complete(request), created)
})

/** A vector as OpenAI's `base64` encoding sends it: its float32 values, little-endian. */
const base64Floats = (vector: ReadonlyArray<number>) => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4))
  return bytes.toString("base64")
}

const createEmbedding = Effect.fnUntraced(function*(payload: OpenAiWire.EmbeddingRequest) {
  const input = typeof payload.input === "string" ? [payload.input] : payload.input
  const response = yield* Gateway.embed({
    model: payload.model,
    input,
    dimensions: payload.dimensions ?? undefined,
    user: payload.user ?? undefined
  })
  const encode = payload.encoding_format === "base64" ? base64Floats : (vector: ReadonlyArray<number>) => vector
  return {
    object: "list" as const,
    data: response.embeddings.map((vector, index) => ({ object: "embedding" as const, index, embedding: encode(vector) })),
    model: response.model,
    usage: { prompt_tokens: response.inputTokens, total_tokens: response.inputTokens }
  }
})

export const ChatLive = HttpApiBuilder.group(api, "chat", (handlers) =>
  handlers
    .handle("createCompletion", ({ payload }) => chat(createCompletion(payload)))
    .handle("createEmbedding", ({ payload }) => chat(createEmbedding(payload))))

const createMessage = Effect.fnUntraced(function*(payload: AnthropicWire.MessagesRequest) {
  const request = yield* canonical(fromMessagesRequest(payload))
  if (payload.stream === true) return sseResponse(messageEvents(yield* Gateway.openStream(request), newId("msg")))
  return toMessage(yield* Gateway.complete(request))
})

const countTokens = Effect.fnUntraced(function*(payload: typeof AnthropicWire.CountTokensRequest.Type) {
  const request = yield* canonical(fromMessagesRequest(payload))
  yield* requireKnownModel(request.model)
  const counter = yield* tokenCounter
  return { input_tokens: yield* counter.request(request) }
})

export const AnthropicLive = HttpApiBuilder.group(api, "anthropic", (handlers) =>
  Effect.gen(function*() {
    const { models } = yield* ModelCatalog
    const createdAt = new Date().toISOString()
    const list = {
      data: models.map((model) => ({ type: "model" as const, id: model.id, display_name: model.id, created_at: createdAt })),
      has_more: false,
      first_id: models[0]?.id ?? null,
      last_id: models.at(-1)?.id ?? null
    }
    return handlers
      .handle("createMessage", ({ payload }) => chat(createMessage(payload)))
      .handle("countTokens", ({ payload }) => chat(countTokens(payload)))
      .handle("listModels", () => chat(Effect.succeed(list)))
  }))

export const GatewayLive = Layer.mergeAll(ModelsLive, ChatLive, AnthropicLive)
