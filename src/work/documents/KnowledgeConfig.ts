import { Config, Context, Effect, Layer, Option } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/** The knowledge base's settings; docs/knowledge.md lists the environment variables. */
export interface KnowledgeSettings {
  /** `EMBEDDINGS_MODEL`: the catalog model that embeds chunks; else the catalog's first of kind `embedding`. */
  readonly embeddingsModel: Option.Option<string>
  /** `KNOWLEDGE_INDEXER` (`on`/`off`): whether this process runs the embedding worker. */
  readonly indexerEnabled: boolean
  /** `KNOWLEDGE_INDEXER_POLL_MS`: the pause between polls when no document was waiting. */
  readonly pollMs: number
  /** `KNOWLEDGE_INDEXER_LEASE_MS`: how long a claim holds without renewal. */
  readonly leaseMs: number
  /** `EMBEDDING_BATCH_SIZE`: chunks per embeddings call. */
  readonly batchSize: number
  /** Documents one poll claims (and embeds at once). */
  readonly concurrency: number
}

export const knowledgeDefaults: KnowledgeSettings = {
  embeddingsModel: Option.none(),
  indexerEnabled: true,
  pollMs: 1_000,
  leaseMs: 60_000,
  batchSize: 64,
  concurrency: 2
}

export class KnowledgeConfig extends Context.Service<KnowledgeConfig, KnowledgeSettings>()("documents/KnowledgeConfig") {
  static readonly fromEnv = Config.all({
    embeddingsModel: Config.option(Config.NonEmptyString("EMBEDDINGS_MODEL")),
    indexerEnabled: switchedOn("KNOWLEDGE_INDEXER"),
    pollMs: positiveInt("KNOWLEDGE_INDEXER_POLL_MS", knowledgeDefaults.pollMs),
    leaseMs: positiveInt("KNOWLEDGE_INDEXER_LEASE_MS", knowledgeDefaults.leaseMs),
    batchSize: positiveInt("EMBEDDING_BATCH_SIZE", knowledgeDefaults.batchSize),
    concurrency: positiveInt("KNOWLEDGE_INDEXER_CONCURRENCY", knowledgeDefaults.concurrency)
  })

  static readonly layer = Layer.effect(KnowledgeConfig, Effect.orDie(KnowledgeConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<KnowledgeSettings>) =>
    Layer.succeed(KnowledgeConfig, { ...knowledgeDefaults, ...overrides })
}
