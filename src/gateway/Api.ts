import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { acceptingUnknownFields } from "../http/StrictInput.ts"
import * as AnthropicWire from "../llm/anthropic/Wire.ts"
import * as OpenAiWire from "../llm/openai/Wire.ts"
import { BadRequest, Forbidden, InternalError, RateLimited } from "../platform/Errors.ts"
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
export class ModelsApi extends HttpApiGroup.make("models").add(
  HttpApiEndpoint.get("list", "/models", { success: OpenAiWire.ModelList, error: errors })
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}

export class ChatApi extends HttpApiGroup.make("chat").add(
  HttpApiEndpoint.post("createCompletion", "/chat/completions", {
    payload: OpenAiWire.ChatCompletionRequest,
    success: orStream(OpenAiWire.ChatCompletion),
    error: errors
  })
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}

export class AnthropicApi extends HttpApiGroup.make("anthropic").add(
  HttpApiEndpoint.post("createMessage", "/messages", {
    payload: AnthropicWire.MessagesRequest,
    success: orStream(AnthropicWire.MessageResponse),
    error: errors
  }),
  HttpApiEndpoint.post("countTokens", "/messages/count_tokens", {
    payload: AnthropicWire.CountTokensRequest,
    success: AnthropicWire.CountTokensResponse,
    error: errors
  }),
  HttpApiEndpoint.get("listModels", "/models", { success: AnthropicWire.ModelList, error: errors })
).middleware(Authentication).prefix("/api/v0/anthropic/v1").annotateMerge(acceptingUnknownFields) {}
