import { Effect, type Stream } from "effect"
import {
  type CatalogModel,
  type EmbeddingRequest,
  type EmbeddingResponse,
  invalidRequest,
  type LlmError,
  type LlmRequest,
  type LlmResponse,
  type LlmStreamEvent
} from "./Llm.ts"

/** One provider implementation (`openai`, `anthropic`, `local`): serves catalog models of its kind. */
export interface Provider {
  readonly generate: (request: LlmRequest, model: CatalogModel) => Effect.Effect<LlmResponse, LlmError>
  readonly stream: (request: LlmRequest, model: CatalogModel) => Stream.Stream<LlmStreamEvent, LlmError>
  readonly embed: (request: EmbeddingRequest, model: CatalogModel) => Effect.Effect<EmbeddingResponse, LlmError>
}

/** The `embed` of a provider without an embeddings API. */
export const noEmbeddings = (provider: string) => (_: EmbeddingRequest, model: CatalogModel) =>
  Effect.fail(invalidRequest(`Model ${model.id}: the ${provider} provider has no embeddings API`))

/** Refuses what only OpenAI-compatible upstreams offer: several completions (`n`) and `response_format`. */
export const withoutOpenAiOnlyFeatures = (request: LlmRequest, model: CatalogModel): Effect.Effect<void, LlmError> => {
  if ((request.n ?? 1) > 1) {
    return Effect.fail(invalidRequest(`Model ${model.id} generates one completion per request: n must be 1`))
  }
  const format = request.responseFormat?.type
  if (format !== undefined && format !== "text") {
    return Effect.fail(invalidRequest(`Model ${model.id} does not support response_format ${String(format)}`))
  }
  return Effect.void
}
