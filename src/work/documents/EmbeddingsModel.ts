import { Context, Effect, Layer, Option } from "effect"
import { type CatalogModel, isEmbeddingModel, ModelCatalog } from "../../models/llm/Llm.ts"
import { LlmConfigError } from "../../models/llm/LlmLive.ts"
import { KnowledgeConfig } from "./KnowledgeConfig.ts"

/**
 * The model that embeds the knowledge base: `EMBEDDINGS_MODEL`, else the
 * catalog's first model of kind `embedding` (offline: `local-embedding`),
 * else none (keyword search only). A setting naming a model that is not an
 * embedding model of the catalog stops the start-up.
 */
export class EmbeddingsModel extends Context.Service<EmbeddingsModel, Option.Option<CatalogModel>>()("documents/EmbeddingsModel") {
  static readonly layer = Layer.effect(EmbeddingsModel, Effect.gen(function*() {
    const { embeddingsModel } = yield* KnowledgeConfig
    const catalog = yield* ModelCatalog
    if (Option.isNone(embeddingsModel)) return Option.fromNullishOr(catalog.models.find(isEmbeddingModel))
    const model = catalog.models.find((entry) => entry.id === embeddingsModel.value)
    if (model === undefined || !isEmbeddingModel(model)) {
      return yield* Effect.die(new LlmConfigError(`EMBEDDINGS_MODEL ${embeddingsModel.value} is not an embedding model of the catalog (LLM_MODELS, kind "embedding")`))
    }
    return Option.some(model)
  }))
}
