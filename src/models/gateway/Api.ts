import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { described } from "../../http/Describe.ts"
import { Authentication } from "../../auth/Authentication.ts"
import { acceptingUnknownFields } from "../../http/StrictInput.ts"
import * as AnthropicWire from "../llm/anthropic/Wire.ts"
import * as OpenAiWire from "../llm/openai/Wire.ts"
import { BadRequest, Forbidden, InternalError, RateLimited } from "../../platform/Errors.ts"
import { SseEvent } from "./Sse.ts"

/**
 * The model gateway: an OpenAI-compatible family under `/api/v0` and an
 * Anthropic-compatible one under `/api/v0/anthropic/v1`, so that the
 * official SDKs and Claude Code work with the platform as base URL.
 */

const errors = [BadRequest, Forbidden, RateLimited, InternalError]

/** A JSON body, or (with `"stream": true`) a `text/event-stream`. */
const orStream = <S extends typeof OpenAiWire.ChatCompletion | typeof AnthropicWire.MessageResponse>(body: S) =>
  [body, HttpApiSchema.StreamSse({ events: SseEvent })] as const

/** Unknown fields and query parameters are accepted and ignored here: these vendors' APIs keep growing. */
export class ModelsApi extends HttpApiGroup.make("models")
  .annotateMerge(OpenApi.annotations({
    description: "The model catalog in OpenAI's format, for OpenAI SDKs pointed at `/api/v0`.",
    override: { "x-displayName": "Models (OpenAI-compatible)" }
  })).add(
  HttpApiEndpoint.get("list", "/models", { success: OpenAiWire.ModelList, error: errors }).pipe(described({
    summary: "List models",
    does: "The catalog's models in OpenAI's list format.",
    who: "chat:use"
  }))
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}

export class ChatApi extends HttpApiGroup.make("chat")
  .annotateMerge(OpenApi.annotations({
    description: "Chat completions in OpenAI's format, streaming or not, on any model of the catalog; every call is billed in credits to the caller's organization.",
    override: { "x-displayName": "Chat (OpenAI-compatible)" }
  })).add(
  HttpApiEndpoint.post("createCompletion", "/chat/completions", {
    payload: OpenAiWire.ChatCompletionRequest,
    success: orStream(OpenAiWire.ChatCompletion),
    error: errors
  }).pipe(described({
    summary: "Create a chat completion",
    does: "OpenAI-compatible chat completion on a model of the catalog (tier names such as `balanced` and client model names are routed too); `stream: true` answers server-sent events. The organization's credits are checked before and billed after.",
    who: "chat:use",
    errors: {
      400: "naming the invalid field or an unknown model",
      403: "without the feature or credits",
      500: "when the model provider fails"
    }
  })),
  HttpApiEndpoint.post("createEmbedding", "/embeddings", {
    payload: OpenAiWire.EmbeddingRequest,
    success: OpenAiWire.EmbeddingList,
    error: errors
  }).pipe(described({
    summary: "Create embeddings",
    does: "OpenAI-compatible embeddings of one text or a list of up to 2048 texts, with a model of kind `embedding` from the catalog (offline: `local-embedding`, a hashed bag of words). `encoding_format` `float` (numbers) or `base64` (little-endian float32, what the official SDK asks for). Billed under `chat` by input tokens: held before, settled to the provider's count.",
    who: "chat:use",
    errors: {
      400: "naming the invalid field, an unknown model or one that is not an embedding model",
      403: "without the feature or credits",
      500: "when the model provider fails"
    }
  }))
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}

export class AnthropicApi extends HttpApiGroup.make("anthropic")
  .annotateMerge(OpenApi.annotations({
    description: "Anthropic's Messages API (`/api/v0/anthropic/v1`), for Anthropic SDKs: messages, token counting, models. Billed like chat.",
    override: { "x-displayName": "Anthropic-compatible" }
  })).add(
  HttpApiEndpoint.post("createMessage", "/messages", {
    payload: AnthropicWire.MessagesRequest,
    success: orStream(AnthropicWire.MessageResponse),
    error: errors
  }).pipe(described({
    summary: "Create a message",
    does: "Anthropic Messages API on a model of the catalog; `stream: true` answers Anthropic's event stream. Billed in credits like chat.",
    who: "chat:use",
    errors: { 400: "naming the invalid field or an unknown model", 403: "without the feature or credits" }
  })),
  HttpApiEndpoint.post("countTokens", "/messages/count_tokens", {
    payload: AnthropicWire.CountTokensRequest,
    success: AnthropicWire.CountTokensResponse,
    error: errors
  }).pipe(described({
    summary: "Count a message's tokens",
    does: "Counts the input tokens of a Messages request (system, messages, tools) with the service's tokenizer, without calling a model and without billing. Cost is linear in the body, and a large body never holds up other requests.",
    who: "chat:use",
    errors: { 400: "naming the invalid field or an unknown model" }
  })),
  HttpApiEndpoint.get("listModels", "/models", { success: AnthropicWire.ModelList, error: errors }).pipe(described({
    summary: "List models (Anthropic format)",
    does: "The catalog's models in Anthropic's list format.",
    who: "chat:use"
  }))
).middleware(Authentication).prefix("/api/v0/anthropic/v1").annotateMerge(acceptingUnknownFields) {}
