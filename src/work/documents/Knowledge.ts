import { Effect, Option } from "effect"
import { DocumentNotFound, KnowledgeRequestInvalid } from "./Errors.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import type { Multipart } from "effect/http"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import type { Principal } from "../../auth/Principal.ts"
import { toApiError } from "../../models/gateway/Gateway.ts"
import { LlmError } from "../../models/llm/Llm.ts"
import { ProjectNotFound } from "../projects/Errors.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { ProjectsRepo } from "../projects/ProjectsRepo.ts"
import { windowOf } from "../../storage/Windows.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import type { Document, NewDocument, SearchMode, SearchRequest, SearchResult } from "./Api.ts"
import { chunkMarkdown } from "./Chunker.ts"
import * as Documents from "./Documents.ts"
import { type DocumentScope, DocumentsRepo, type KnowledgeDocument, type SearchHit } from "./DocumentsRepo.ts"
import { EmbeddingsModel } from "./EmbeddingsModel.ts"

/**
 * The knowledge base (DESIGN §7.1, docs/knowledge.md): documents stored as
 * Markdown and chunked; keyword search at once, embeddings by the
 * background `Indexer` when an embeddings model is configured.
 */

export const toDocument = (record: KnowledgeDocument): typeof Document.Type => ({
  id: record.id,
  companyId: record.companyId,
  title: record.title,
  type: record.type,
  tags: record.tags,
  projectId: record.projectId,
  tokens: record.tokens,
  chunkCount: record.chunkCount,
  status: record.status,
  failure: record.failure,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

/** Reciprocal rank fusion's constant: ranks beyond the first few weigh about the same. */
const rrfK = 60

/** Candidates each ranking brings to a hybrid fusion, at least. */
const minimumCandidates = 20

const requireProject = (principal: Principal, projectId: string | undefined) =>
  projectId === undefined
    ? Effect.void
    : Effect.flatMap(
      ProjectsRepo.use((repo) => repo.get(principal.companyId, projectId)),
      (found) => (Option.isSome(found) ? Effect.void : Effect.fail(new ProjectNotFound({ id: projectId })))
    )

interface Incoming {
  readonly title: string
  readonly type: string
  readonly content: string
  readonly tags: ReadonlyArray<string>
  readonly projectId: string | undefined
}

/** Chunks and stores one document; `indexing` when it waits for embeddings, else `ready`. */
const ingest = (principal: Principal, incoming: Incoming) =>
  Effect.gen(function*() {
    const model = yield* EmbeddingsModel
    const id = newId("doc")
    const { chunks, tokens } = yield* chunkMarkdown(incoming.content, incoming.title)
    const now = yield* currentDate
    const record: KnowledgeDocument = {
      id,
      companyId: principal.companyId,
      organizationId: principal.organizationId,
      userId: principal.userId,
      projectId: incoming.projectId ?? null,
      title: incoming.title,
      type: incoming.type,
      tags: [...new Set(incoming.tags)],
      tokens,
      chunkCount: chunks.length,
      status: Option.isSome(model) && chunks.length > 0 ? "indexing" : "ready",
      failure: null,
      embeddingModel: Option.isSome(model) && chunks.length > 0 ? model.value.id : null,
      createdAt: now,
      updatedAt: now
    }
    yield* DocumentsRepo.use((repo) => repo.create(record, incoming.content, chunks))
    return toDocument(record)
  })

export const create = Effect.fn("Knowledge.create")(function*(input: typeof NewDocument.Type) {
  yield* Authorized("documents:write")
  const principal = yield* requireCompany(input.companyId)
  yield* requireProject(principal, input.projectId)
  const document = yield* ingest(principal, {
    title: input.title,
    type: "md",
    content: input.content,
    tags: input.tags ?? [],
    projectId: input.projectId
  })
  return { documents: [document] }
})

const commaTags = (tags: string | undefined) =>
  (tags ?? "").split(",").map((tag) => tag.trim()).filter((tag) => tag.length > 0)

/** Uploaded files, converted as `/documents/convert` converts them, each stored as a document. */
export const upload = Effect.fn("Knowledge.upload")(function*(input: {
  readonly files: ReadonlyArray<Multipart.PersistedFile>
  readonly title?: string | undefined
  readonly tags?: string | undefined
  readonly projectId?: string | undefined
  readonly companyId?: string | undefined
}) {
  yield* Authorized("documents:write")
  const principal = yield* requireCompany(input.companyId)
  if (input.files.length === 0) return yield* new KnowledgeRequestInvalid({ message: "No file: send one or more parts named \"files\"" })
  if (input.title !== undefined && input.files.length > 1) {
    return yield* new KnowledgeRequestInvalid({ message: "title can only be given with one file; several files are titled by their names" })
  }
  const tags = commaTags(input.tags)
  const invalidTag = tags.find((tag) => tag.length > 100)
  if (invalidTag !== undefined) return yield* new KnowledgeRequestInvalid({ message: `Tag "${invalidTag.slice(0, 40)}…" is longer than 100 characters` })
  yield* requireProject(principal, input.projectId)
  const converted = yield* Documents.convert({ files: input.files, companyId: input.companyId, generateSummary: false })
  const documents = yield* Effect.forEach(converted.documents, (file) =>
    ingest(principal, {
      title: input.title ?? file.name,
      type: file.type,
      content: file.content.replaceAll("\u0000", ""),
      tags,
      projectId: input.projectId
    }))
  return { documents }
})

export const list = Effect.fn("Knowledge.list")(function*(request: PageRequest, filter: {
  readonly search?: string | undefined
  readonly tag?: string | undefined
  readonly projectId?: string | undefined
}) {
  const { principal } = yield* Authorized("documents:read")
  const { rows, total } = yield* DocumentsRepo.use((repo) => repo.list(principal.companyId, filter, windowOf(request)))
  return toPage(rows.map(toDocument), total, request)
})

export const get = Effect.fn("Knowledge.get")(function*(id: string) {
  const { principal } = yield* Authorized("documents:read")
  const found = yield* DocumentsRepo.use((repo) => repo.get(principal.companyId, id))
  return toDocument(yield* orRefuse(() => new DocumentNotFound({ id }))(found))
})

export const content = Effect.fn("Knowledge.content")(function*(id: string) {
  const { principal } = yield* Authorized("documents:read")
  const found = yield* DocumentsRepo.use((repo) => repo.content(principal.companyId, id))
  return { content: yield* orRefuse(() => new DocumentNotFound({ id }))(found) }
})

export const remove = Effect.fn("Knowledge.remove")(function*(id: string) {
  const { principal } = yield* Authorized("documents:write")
  const removed = yield* DocumentsRepo.use((repo) => repo.remove(principal.companyId, id))
  return toDocument(yield* orRefuse(() => new DocumentNotFound({ id }))(removed))
})

/** Reciprocal rank fusion of several rankings: each chunk scores Σ 1 / (k + rank). */
export const fuse = (rankings: ReadonlyArray<ReadonlyArray<SearchHit>>, limit: number): Array<SearchHit> => {
  const fused = new Map<string, { hit: SearchHit; score: number }>()
  for (const ranking of rankings) {
    ranking.forEach((hit, index) => {
      const entry = fused.get(hit.chunkId) ?? { hit, score: 0 }
      entry.score += 1 / (rrfK + index + 1)
      fused.set(hit.chunkId, entry)
    })
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.hit.chunkId.localeCompare(b.hit.chunkId))
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score }))
}

/** The query's embedding, billed under `documents`. */
const embedQuery = (principal: Principal, model: string, query: string) =>
  Effect.map(
    Effect.mapError(BilledLlm.embed(payerOf(principal), "documents", { model, input: [query] }), (error) =>
      error instanceof LlmError ? toApiError(error) : error),
    (response) => response.embeddings[0]!
  )

export const search = Effect.fn("Knowledge.search")(function*(input: typeof SearchRequest.Type) {
  yield* Authorized("documents:read")
  const principal = yield* requireCompany(input.companyId)
  yield* requireProject(principal, input.projectId)
  const model = yield* EmbeddingsModel
  const requested: typeof SearchMode.Type = input.mode ?? "hybrid"
  if (requested === "semantic" && Option.isNone(model)) {
    return yield* new KnowledgeRequestInvalid({
      message: "Semantic search needs an embeddings model: set EMBEDDINGS_MODEL or add a model of kind \"embedding\" to LLM_MODELS"
    })
  }
  // No document to search among: nothing to find (and no query to embed or bill).
  if (input.documentIds?.length === 0) return { results: [] }
  const mode = requested === "hybrid" && Option.isNone(model) ? "keyword" : requested
  const limit = input.limit ?? 10
  const scope: DocumentScope = { tag: input.tag, projectId: input.projectId, documentIds: input.documentIds }
  const candidates = mode === "hybrid" ? Math.max(limit * 2, minimumCandidates) : limit
  const repo = yield* DocumentsRepo
  const keyword = mode === "semantic" ? Effect.succeed([]) : repo.keywordSearch(principal.companyId, scope, input.query, candidates)
  const semantic = mode === "keyword" || Option.isNone(model)
    ? Effect.succeed([])
    : Effect.flatMap(
      embedQuery(principal, model.value.id, input.query),
      (vector) => repo.semanticSearch(principal.companyId, scope, model.value.id, vector, candidates)
    )
  const [byKeyword, byMeaning] = yield* Effect.all([keyword, semantic], { concurrency: 2 })
  const ranked = mode === "hybrid" ? fuse([byKeyword, byMeaning], limit) : mode === "keyword" ? byKeyword : byMeaning
  const highlights = yield* repo.highlights(ranked.map((hit) => hit.chunkId), input.query)
  const results: Array<typeof SearchResult.Type> = ranked.map((hit) => ({
    documentId: hit.documentId,
    title: hit.title,
    chunkId: hit.chunkId,
    content: hit.content,
    score: hit.score,
    highlights: highlights.get(hit.chunkId) ?? []
  }))
  return { results }
})
