import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option, Result, Stream } from "effect"
import { HttpClient } from "effect/http"
import { AppConfig } from "../../platform/AppConfig.ts"
import { outboundClient } from "../../platform/Outbound.ts"
import { catalogFrom, resolveModel } from "./Catalog.ts"
import { unknownModelMessage } from "./Errors.ts"
import {
  type CatalogModel,
  invalidRequest,
  isEmbeddingModel,
  Llm,
  type LlmError,
  type LlmRequest,
  ModelCatalog,
  type ProviderName
} from "./Llm.ts"
import { LocalProvider } from "./local/LocalProvider.ts"
import { makeAnthropicProvider } from "./anthropic/AnthropicProvider.ts"
import { makeOpenAiProvider } from "./openai/OpenAiProvider.ts"
import type { Provider } from "./Provider.ts"
import { TokenizerThreads } from "./Tokenizer.ts"

export class LlmConfigError extends Error {
  readonly _tag = "LlmConfigError"
}

/** The catalog the settings describe; an inconsistent one stops the start-up. */
const ModelCatalogLive = Layer.effect(
  ModelCatalog,
  Effect.gen(function*() {
    const catalog = catalogFrom(yield* AppConfig)
    if ("error" in catalog) return yield* Effect.die(new LlmConfigError(catalog.error))
    return { models: catalog.models, resolve: (model) => resolveModel(catalog.models, model) }
  })
)

/**
 * The connections to model providers. Every wait for body data is bounded
 * by `LLM_TIMEOUT_MS` here, in undici's own timer — a stream's silence
 * timeout then costs nothing per chunk (Effect's client sets no body timeout
 * of its own, so each request's is set again on its way out).
 */
const ProviderDispatcher = Layer.effect(
  NodeHttpClient.Dispatcher,
  Effect.gen(function*() {
    const { llmTimeoutMs } = yield* AppConfig
    const agent = yield* NodeHttpClient.makeDispatcher
    return agent.compose((dispatch) => (options, handler) => dispatch({ ...options, bodyTimeout: llmTimeoutMs }, handler))
  })
)

/**
 * The `Llm` service: routes each request through the catalog (exact id,
 * else tier by name) to the provider serving that model.
 */
const LlmRouting = Layer.effect(
  Llm,
  Effect.gen(function*() {
    const settings = yield* AppConfig
    const catalog = yield* ModelCatalog
    const client = yield* HttpClient.HttpClient
    const upstream = { timeoutMs: settings.llmTimeoutMs, maxRetries: settings.llmMaxRetries }
    const providers: Record<ProviderName, Provider> = {
      local: LocalProvider,
      openai: makeOpenAiProvider(client, {
        ...upstream,
        baseUrl: Option.getOrElse(settings.openaiBaseUrl, () => "https://api.openai.com/v1"),
        apiKey: Option.getOrUndefined(settings.openaiApiKey)
      }),
      anthropic: makeAnthropicProvider(client, {
        ...upstream,
        baseUrl: Option.getOrElse(settings.anthropicBaseUrl, () => "https://api.anthropic.com"),
        apiKey: Option.getOrUndefined(settings.anthropicApiKey)
      })
    }
    const route = (request: { readonly model: string }): [Provider, CatalogModel] | undefined => {
      const model = catalog.resolve(request.model)
      return model === undefined ? undefined : [providers[model.provider], model]
    }
    const unknownModel = (request: { readonly model: string }) => invalidRequest(unknownModelMessage(request.model))
    /** The provider and model of a chat request; an embedding model cannot chat. */
    const chatRoute = (request: LlmRequest): Result.Result<[Provider, CatalogModel], LlmError> => {
      const routed = route(request)
      if (routed === undefined) return Result.fail(unknownModel(request))
      if (isEmbeddingModel(routed[1])) {
        return Result.fail(invalidRequest(`Model ${routed[1].id} is an embedding model: call POST /api/v0/embeddings with it`))
      }
      return Result.succeed(routed)
    }
    return {
      generate: (request) =>
        Result.match(chatRoute(request), {
          onFailure: Effect.fail,
          onSuccess: ([provider, model]) => provider.generate(request, model)
        }),
      stream: (request) =>
        Result.match(chatRoute(request), {
          onFailure: Stream.fail,
          onSuccess: ([provider, model]) => provider.stream(request, model)
        }),
      embed: (request) => {
        const routed = route(request)
        if (routed === undefined) return Effect.fail(unknownModel(request))
        if (!isEmbeddingModel(routed[1])) {
          return Effect.fail(invalidRequest(`Model ${routed[1].id} is not an embedding model: GET /api/v0/models lists the models`))
        }
        return routed[0].embed(request, routed[1])
      }
    }
  })
).pipe(Layer.provide(outboundClient(ProviderDispatcher)))

/** `Llm` and `ModelCatalog`, from the settings, and the tokenizer loaded before the service answers. */
export const LlmLive = LlmRouting.pipe(Layer.provideMerge(ModelCatalogLive), Layer.merge(TokenizerThreads))
