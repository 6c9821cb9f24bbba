import { Cause, Context, Effect, Layer, Option } from "effect"
import type { Llm, ModelCatalog } from "../../models/llm/Llm.ts"
import { LeaseLost, pollForever, whileLeased } from "../../platform/LeasedWork.ts"
import { currentDate } from "../../platform/Time.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import type { Credits } from "../../accounts/usage/Credits.ts"
import { DocumentsRepo, type IndexingClaim } from "./DocumentsRepo.ts"
import { EmbeddingsModel } from "./EmbeddingsModel.ts"
import { KnowledgeConfig } from "./KnowledgeConfig.ts"

/**
 * The knowledge base's embedding worker, in the scheduler's pattern: each
 * poll claims documents waiting in `indexing` with a lease (processes
 * sharing one database never take the same one), embeds their chunks in
 * batches of `EMBEDDING_BATCH_SIZE` (each batch held and settled under
 * feature `documents`), and marks them `ready`, or `failed` with the reason
 * (no credits, the model refused). The lease is renewed while it works and
 * every write checks it, so a run whose lease was taken over stores nothing
 * more; a crashed process's documents are picked up once its lease expires,
 * and only their missing embeddings are made.
 */
export class Indexer extends Context.Service<Indexer, {
  /** One poll: claims waiting documents, indexes them, and answers how many it claimed. */
  readonly runDue: Effect.Effect<number>
}>()("documents/Indexer") {
  static readonly layer = Layer.effect(Indexer, Effect.gen(function*() {
    const config = yield* KnowledgeConfig
    const repo = yield* DocumentsRepo
    const context = yield* Effect.context<Credits | Llm | ModelCatalog>()
    const indexedLengths = new Set<number>()
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    const renew = (claim: IndexingClaim) =>
      Effect.flatMap(currentDate, (now) => repo.renewLease(claim.document.id, claim.token, leaseUntil(now)))

    const ensureIndex = (dimensions: number) =>
      indexedLengths.has(dimensions)
        ? Effect.void
        : Effect.tap(repo.ensureVectorIndex(dimensions), () => Effect.sync(() => indexedLengths.add(dimensions)))

    /** Embeds the document's missing chunks batch by batch; answers why it failed, or undefined. */
    const embedAll = (claim: IndexingClaim, model: string) =>
      Effect.gen(function*() {
        const payer = { organizationId: claim.document.organizationId, companyId: claim.document.companyId, userId: claim.document.userId }
        while (true) {
          const pending = yield* repo.pendingChunks(claim.document.id, model, config.batchSize)
          if (pending.length === 0) return undefined
          const embedded = yield* BilledLlm.embed(payer, "documents", {
            model,
            input: pending.map((chunk) => `${chunk.heading}\n\n${chunk.content}`)
          }).pipe(Effect.result)
          if (embedded._tag === "Failure") {
            const failure = embedded.failure
            return failure._tag === "LlmError" ? `The embeddings model failed: ${failure.message}` : failure.message
          }
          const vectors = embedded.success.embeddings
          yield* ensureIndex(vectors[0]!.length)
          const stored = yield* repo.storeEmbeddings(claim, model, pending.map((chunk, index) => ({ chunkId: chunk.id, vector: vectors[index]! })))
          if (!stored) return yield* new LeaseLost({ id: claim.document.id })
        }
      })

    const index = (claim: IndexingClaim) =>
      Effect.gen(function*() {
        const model = claim.document.embeddingModel
        const failure = model === null ? undefined : yield* embedAll(claim, model)
        const finished = yield* repo.finishIndexing(claim, failure, yield* currentDate)
        if (!finished) yield* Effect.logWarning("Knowledge indexing lease lost before finishing", { documentId: claim.document.id })
        else if (failure !== undefined) yield* Effect.logWarning("Knowledge indexing failed", { documentId: claim.document.id, failure })
      })

    const handle = (claim: IndexingClaim) =>
      index(claim).pipe(
        whileLeased(claim.document.id, config.leaseMs, renew(claim)),
        Effect.catchTag("LeaseLost", (lost) => Effect.logWarning("Knowledge indexing lease lost", lost)),
        // A failure of storage leaves the lease to expire: the document is retried, never lost.
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("Knowledge indexing failed unexpectedly", { documentId: claim.document.id, cause })
        ),
        Effect.provideContext(context)
      )

    return {
      runDue: Effect.gen(function*() {
        const now = yield* currentDate
        const claims = yield* repo.claimIndexing(now, leaseUntil(now), config.concurrency)
        yield* Effect.forEach(claims, handle, { concurrency: "unbounded", discard: true })
        return claims.length
      })
    }
  }))

  /**
   * The background worker of a server process: polls every
   * `KNOWLEDGE_INDEXER_POLL_MS`, at once again while a poll found a full batch.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* KnowledgeConfig
    const model = yield* EmbeddingsModel
    if (!config.indexerEnabled || Option.isNone(model)) return
    const indexer = yield* Indexer
    yield* pollForever({ name: "Knowledge indexer", poll: indexer.runDue, batch: config.concurrency, pollMs: config.pollMs })
    yield* Effect.logInfo("Knowledge indexer started", { model: model.value.id, pollMs: config.pollMs })
  }))
}

/** The worker over the knowledge settings and model (`KnowledgeSettingsLive`); needs storage, `Credits` and an `Llm`. */
export const IndexerLive: Layer.Layer<never, never, DocumentsRepo | EmbeddingsModel | KnowledgeConfig | Credits | Llm | ModelCatalog> =
  Indexer.worker.pipe(Layer.provide(Indexer.layer))
