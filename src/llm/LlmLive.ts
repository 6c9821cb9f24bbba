import { Effect, Layer, Stream } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { catalogFrom, resolveModel } from "./Catalog.ts"
import { type CatalogModel, invalidRequest, Llm, type LlmRequest, type ProviderName } from "./Llm.ts"
import { LocalProvider } from "./local/LocalProvider.ts"
import type { Provider } from "./Provider.ts"

export class LlmConfigError extends Error {
  readonly _tag = "LlmConfigError"
}

/**
 * The `Llm` service: routes each request through the catalog (exact id,
 * else tier by name) to the provider serving that model.
 */
export const LlmLive = Layer.effect(
  Llm,
  Effect.gen(function*() {
    const settings = yield* AppConfig
    const catalog = catalogFrom(settings)
    if ("error" in catalog) return yield* Effect.die(new LlmConfigError(catalog.error))
    const providers: Partial<Record<ProviderName, Provider>> = { local: LocalProvider }
    const unavailable = catalog.models.find((model) => providers[model.provider] === undefined)
    if (unavailable !== undefined) {
      return yield* Effect.die(new LlmConfigError(`Provider ${unavailable.provider} is not available yet`))
    }
    const route = (request: LlmRequest): [Provider, CatalogModel] | undefined => {
      const model = resolveModel(catalog.models, request.model)
      return model === undefined ? undefined : [providers[model.provider]!, model]
    }
    const unknownModel = (request: LlmRequest) =>
      invalidRequest(`Unknown model "${request.model}": GET /api/v0/models lists the available models`)
    return {
      models: catalog.models,
      generate: (request) => {
        const routed = route(request)
        return routed === undefined ? Effect.fail(unknownModel(request)) : routed[0].generate(request, routed[1])
      },
      stream: (request) => {
        const routed = route(request)
        return routed === undefined ? Stream.fail(unknownModel(request)) : routed[0].stream(request, routed[1])
      }
    }
  })
)
