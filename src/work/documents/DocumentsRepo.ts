import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { outboxOn } from "../../storage/Outbox.ts"
import type { Window } from "../../storage/Windows.ts"
import type { Chunk } from "./Chunker.ts"

/**
 * The knowledge base's storage (migrations 0120, 0121): documents, their
 * chunks with a weighted `tsvector` (GIN index) for keyword search, and
 * their embeddings (pgvector, a partial HNSW index per vector length) for
 * semantic search. Every search filters by company inside its SQL.
 */

export const DocumentStatus = Schema.Literals(["indexing", "ready", "failed"])

export const KnowledgeDocument = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  organizationId: Schema.String,
  userId: Schema.NullOr(Schema.String),
  projectId: Schema.NullOr(Schema.String),
  title: Schema.String,
  type: Schema.String,
  tags: Schema.Array(Schema.String),
  tokens: Schema.Int,
  chunkCount: Schema.Int,
  status: DocumentStatus,
  failure: Schema.NullOr(Schema.String),
  embeddingModel: Schema.NullOr(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})

export type KnowledgeDocument = typeof KnowledgeDocument.Type

const DocumentRow = KnowledgeDocument.pipe(Schema.encodeKeys({
  companyId: "company_id",
  organizationId: "organization_id",
  userId: "user_id",
  projectId: "project_id",
  chunkCount: "chunk_count",
  embeddingModel: "embedding_model",
  createdAt: "created_at",
  updatedAt: "updated_at"
}))

const documentColumns = "id, company_id, organization_id, user_id, project_id, title, type, tags, tokens, chunk_count, status, failure, embedding_model, created_at, updated_at"

/** One search result before fusion: a chunk, its document and its score in one ranking. */
export const SearchHit = Schema.Struct({
  chunkId: Schema.String,
  documentId: Schema.String,
  title: Schema.String,
  content: Schema.String,
  score: Schema.Number
}).pipe(Schema.encodeKeys({ chunkId: "chunk_id", documentId: "document_id" }))

export type SearchHit = typeof SearchHit.Type

/** Which of a company's documents a search or a listing covers. */
export interface DocumentScope {
  readonly tag?: string | undefined
  /** That project's documents plus the company's documents of no project. */
  readonly projectId?: string | undefined
  readonly documentIds?: ReadonlyArray<string> | undefined
}

export interface DocumentFilter {
  /** A part of the title, case-insensitive. */
  readonly search?: string | undefined
  readonly tag?: string | undefined
  /** Exactly that project's documents. */
  readonly projectId?: string | undefined
}

/** A chunk still to embed for the document's model. */
export const PendingChunk = Schema.Struct({ id: Schema.String, heading: Schema.String, content: Schema.String, tokens: Schema.Int })

export interface StoredEmbedding {
  readonly chunkId: string
  readonly vector: ReadonlyArray<number>
}

/** The document an indexing worker claimed, with its lease token. */
export interface IndexingClaim {
  readonly document: KnowledgeDocument
  readonly token: string
}

const Count = Schema.Struct({ count: Schema.Int })
const Headline = Schema.Struct({ id: Schema.String, headline: Schema.String })

/** Made once rather than per search. */
const hits = Schema.decodeUnknownEffect(Schema.Array(SearchHit))

const vectorLiteral = (vector: ReadonlyArray<number>) => `[${vector.join(",")}]`

/** Rows per insert: well under PostgreSQL's 65,535 parameters. */
const insertBatch = 1_000

/** The `document.ready` event's payload (docs/webhooks.md). */
const readyEvent = (document: KnowledgeDocument) => ({
  documentId: document.id,
  title: document.title,
  type: document.type,
  tags: document.tags,
  projectId: document.projectId,
  chunkCount: document.chunkCount
})

/** HNSW candidates per search, and the scan continues past filtered-out rows (pgvector's iterative scan). */
const efSearch = 100

export class DocumentsRepo extends Context.Service<DocumentsRepo, {
  readonly create: (document: KnowledgeDocument, content: string, chunks: ReadonlyArray<Chunk>) => Effect.Effect<void>
  /** Newest first. */
  readonly list: (companyId: string, filter: DocumentFilter, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<KnowledgeDocument>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<KnowledgeDocument>>
  readonly content: (companyId: string, id: string) => Effect.Effect<Option.Option<string>>
  /** Removes the document with its chunks and embeddings; the removed document, if it existed. */
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<KnowledgeDocument>>
  /** Full-text search (`websearch_to_tsquery`, ranked by `ts_rank_cd`), best first. */
  readonly keywordSearch: (companyId: string, scope: DocumentScope, query: string, limit: number) => Effect.Effect<ReadonlyArray<SearchHit>>
  /** Nearest chunks by cosine distance among embeddings of `model` (HNSW), best first; score = cosine similarity. */
  readonly semanticSearch: (
    companyId: string,
    scope: DocumentScope,
    model: string,
    vector: ReadonlyArray<number>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SearchHit>>
  /** `ts_headline` fragments of each chunk for the query, by chunk id. */
  readonly highlights: (chunkIds: ReadonlyArray<string>, query: string) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>>
  /** Creates the partial HNSW index for vectors of `dimensions` values, once. */
  readonly ensureVectorIndex: (dimensions: number) => Effect.Effect<void>
  /** Claims up to `limit` documents waiting for embeddings whose lease is free or expired. */
  readonly claimIndexing: (now: Date, leaseUntil: Date, limit: number) => Effect.Effect<ReadonlyArray<IndexingClaim>>
  readonly renewLease: (documentId: string, token: string, leaseUntil: Date) => Effect.Effect<boolean>
  readonly pendingChunks: (documentId: string, model: string, limit: number) => Effect.Effect<ReadonlyArray<typeof PendingChunk.Type>>
  /** Stores embeddings while the lease is held; false (nothing stored) when it was lost. */
  readonly storeEmbeddings: (claim: IndexingClaim, model: string, embeddings: ReadonlyArray<StoredEmbedding>) => Effect.Effect<boolean>
  /** Ends indexing (`ready`, or `failed` with why) while the lease is held. */
  readonly finishIndexing: (claim: IndexingClaim, failure: string | undefined, now: Date) => Effect.Effect<boolean>
}>()("documents/DocumentsRepo") {
  static readonly layer = Layer.effect(DocumentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = outboxOn(sql)
    // Emitted in the transaction that makes a document ready.
    const emitReady = (document: KnowledgeDocument) => outbox.emit(document.companyId, "document.ready", readyEvent(document))
    const columns = sql.literal(documentColumns)
    const scoped = (scope: DocumentScope) =>
      sql.and([
        ...(scope.tag === undefined ? [] : [sql`${scope.tag} = ANY(d.tags)`]),
        ...(scope.projectId === undefined ? [] : [sql`(d.project_id = ${scope.projectId} OR d.project_id IS NULL)`]),
        ...(scope.documentIds === undefined ? [] : [sql`d.id IN ${sql.in(scope.documentIds)}`])
      ])

    /** The scope as a condition on the chunk `c`'s document; nothing when the scope is the whole company. */
    const inScope = (scope: DocumentScope) =>
      scope.tag === undefined && scope.projectId === undefined && scope.documentIds === undefined
        ? sql``
        : sql` AND EXISTS (SELECT 1 FROM knowledge_documents d WHERE d.id = c.document_id AND ${scoped(scope)})`

    const findDocument = SqlSchema.findOneOption({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: DocumentRow,
      execute: ({ companyId, id }) => sql`SELECT ${columns} FROM knowledge_documents WHERE company_id = ${companyId} AND id = ${id}`
    })
    const removeDocument = SqlSchema.findOneOption({
      Request: Schema.Struct({ companyId: Schema.String, id: Schema.String }),
      Result: DocumentRow,
      execute: ({ companyId, id }) => sql`DELETE FROM knowledge_documents WHERE company_id = ${companyId} AND id = ${id} RETURNING ${columns}`
    })

    return {
      create: (document, content, chunks) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO knowledge_documents (id, company_id, organization_id, user_id, project_id, title, type, tags,
              content, tokens, chunk_count, status, failure, embedding_model, created_at, updated_at)
            VALUES (${document.id}, ${document.companyId}, ${document.organizationId}, ${document.userId}, ${document.projectId},
              ${document.title}, ${document.type}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(document.tags)}::jsonb)), ${content}, ${document.tokens}, ${document.chunkCount},
              ${document.status}, ${document.failure}, ${document.embeddingModel}, ${document.createdAt}, ${document.updatedAt})`
          for (let from = 0; from < chunks.length; from += insertBatch) {
            const rows = chunks.slice(from, from + insertBatch)
            yield* sql`INSERT INTO knowledge_chunks (id, document_id, company_id, ordinal, heading, content, tokens)
              SELECT ${document.id} || '_' || t.ordinal, ${document.id}, ${document.companyId}, t.ordinal, t.heading, t.content, t.tokens
              FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS t(ordinal int, heading text, content text, tokens int)`
          }
          if (document.status === "ready") yield* emitReady(document)
        })).pipe(Effect.orDie),

      list: (companyId, filter, window) =>
        Effect.gen(function*() {
          const where = sql.and([
            sql`company_id = ${companyId}`,
            ...(filter.search === undefined ? [] : [sql`strpos(lower(title), lower(${filter.search})) > 0`]),
            ...(filter.tag === undefined ? [] : [sql`${filter.tag} = ANY(tags)`]),
            ...(filter.projectId === undefined ? [] : [sql`project_id = ${filter.projectId}`])
          ])
          const rows = yield* sql`SELECT ${columns} FROM knowledge_documents WHERE ${where}
            ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`
          const [count] = yield* sql`SELECT count(*)::int AS count FROM knowledge_documents WHERE ${where}`
          return {
            rows: yield* Schema.decodeUnknownEffect(Schema.Array(DocumentRow))(rows),
            total: (yield* Schema.decodeUnknownEffect(Count)(count)).count
          }
        }).pipe(Effect.orDie),

      get: (companyId, id) => Effect.orDie(findDocument({ companyId, id })),

      content: (companyId, id) =>
        Effect.map(
          Effect.orDie(sql<{ readonly content: string }>`SELECT content FROM knowledge_documents WHERE company_id = ${companyId} AND id = ${id}`),
          (rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.content)
        ),

      remove: (companyId, id) => Effect.orDie(removeDocument({ companyId, id })),

      // The title is a subquery rather than a join: the planner evaluates it for the returned rows only
      // (after the sort and limit) and plans no join, which halves the statement's cost on PGlite; the
      // documents table joins only when the scope filters on it (docs/knowledge.md#search-modes).
      keywordSearch: (companyId, scope, query, limit) =>
        Effect.flatMap(
          sql`SELECT c.id AS chunk_id, c.document_id, (SELECT d.title FROM knowledge_documents d WHERE d.id = c.document_id) AS title,
              c.content, ts_rank_cd(c.search, websearch_to_tsquery('english', ${query})) AS score
            FROM knowledge_chunks c
            WHERE c.company_id = ${companyId} AND c.search @@ websearch_to_tsquery('english', ${query})${inScope(scope)}
            ORDER BY score DESC, c.id
            LIMIT ${limit}`,
          hits
        ).pipe(Effect.orDie),

      semanticSearch: (companyId, scope, model, vector, limit) => {
        // The length is part of the SQL text (not a parameter), so the planner matches the partial index.
        const typed = sql.literal(`vector(${vector.length})`)
        const literal = vectorLiteral(vector)
        return sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL hnsw.iterative_scan = relaxed_order`
          yield* sql.unsafe(`SET LOCAL hnsw.ef_search = ${efSearch}`)
          const rows = yield* sql`SELECT e.chunk_id, c.document_id, d.title, c.content,
              1 - (e.embedding::${typed} <=> ${literal}::${typed}) AS score
            FROM knowledge_embeddings e
            JOIN knowledge_chunks c ON c.id = e.chunk_id
            JOIN knowledge_documents d ON d.id = c.document_id
            WHERE e.company_id = ${companyId} AND e.model = ${model} AND e.dimensions = ${sql.literal(String(vector.length))}
              AND ${scoped(scope)}
            ORDER BY e.embedding::${typed} <=> ${literal}::${typed}
            LIMIT ${limit}`
          return yield* hits(rows)
        })).pipe(Effect.orDie)
      },

      highlights: (chunkIds, query) =>
        chunkIds.length === 0
          ? Effect.succeed(new Map())
          : Effect.gen(function*() {
            const rows = yield* sql`SELECT id, ts_headline('english', content, websearch_to_tsquery('english', ${query}),
                'MaxFragments=2, MaxWords=30, MinWords=10, StartSel=**, StopSel=**') AS headline
              FROM knowledge_chunks WHERE id IN ${sql.in(chunkIds)}`
            const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(Headline))(rows)
            return new Map(decoded.map((row) => [row.id, row.headline.split(" ... ").map((part) => part.trim()).filter((part) => part.length > 0)]))
          }).pipe(Effect.orDie),

      ensureVectorIndex: (dimensions) =>
        sql.unsafe(
          `CREATE INDEX IF NOT EXISTS knowledge_embeddings_hnsw_${dimensions} ON knowledge_embeddings
            USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE dimensions = ${dimensions}`
        ).pipe(
          // Another process created it at the same moment: it exists either way.
          Effect.catchTag("SqlError", (error) => error.reason._tag === "UniqueViolation" ? Effect.void : Effect.fail(error)),
          Effect.asVoid,
          Effect.orDie
        ),

      claimIndexing: (now, leaseUntil, limit) =>
        Effect.gen(function*() {
          const token = crypto.randomUUID()
          const rows = yield* leasedClaim(sql, {
            table: "knowledge_documents",
            where: sql`status = 'indexing' AND (lease_until IS NULL OR lease_until < ${now})`,
            orderBy: sql`id`,
            limit,
            lease: { token, until: leaseUntil, untilColumn: "lease_until" },
            returning: columns
          })
          const documents = yield* Schema.decodeUnknownEffect(Schema.Array(DocumentRow))(rows)
          return documents.map((document) => ({ document, token }))
        }).pipe(Effect.orDie),

      renewLease: (documentId, token, leaseUntil) =>
        Effect.map(
          sql`UPDATE knowledge_documents SET lease_until = ${leaseUntil}
            WHERE id = ${documentId} AND lease_token = ${token} AND status = 'indexing' RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),

      pendingChunks: (documentId, model, limit) =>
        Effect.flatMap(
          sql`SELECT c.id, c.heading, c.content, c.tokens FROM knowledge_chunks c
            WHERE c.document_id = ${documentId}
              AND NOT EXISTS (SELECT 1 FROM knowledge_embeddings e WHERE e.chunk_id = c.id AND e.model = ${model})
            ORDER BY c.ordinal LIMIT ${limit}`,
          Schema.decodeUnknownEffect(Schema.Array(PendingChunk))
        ).pipe(Effect.orDie),

      storeEmbeddings: (claim, model, embeddings) =>
        sql.withTransaction(Effect.gen(function*() {
          const held = yield* sql`SELECT id FROM knowledge_documents
            WHERE id = ${claim.document.id} AND lease_token = ${claim.token} AND status = 'indexing' FOR UPDATE`
          if (held.length === 0) return false
          for (let from = 0; from < embeddings.length; from += insertBatch) {
            const batch = embeddings.slice(from, from + insertBatch)
            const rows = JSON.stringify(batch.map((item) => ({ chunk_id: item.chunkId, embedding: vectorLiteral(item.vector) })))
            yield* sql`INSERT INTO knowledge_embeddings (chunk_id, model, company_id, dimensions, embedding)
              SELECT t.chunk_id, ${model}, ${claim.document.companyId}, vector_dims(t.embedding::vector), t.embedding::vector
              FROM jsonb_to_recordset(${rows}::jsonb) AS t(chunk_id text, embedding text)
              ON CONFLICT (chunk_id, model) DO NOTHING`
          }
          return true
        })).pipe(Effect.orDie),

      finishIndexing: (claim, failure, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`UPDATE knowledge_documents
            SET status = ${failure === undefined ? "ready" : "failed"}, failure = ${failure ?? null},
              lease_token = NULL, lease_until = NULL, updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE id = ${claim.document.id} AND lease_token = ${claim.token} AND status = 'indexing' RETURNING id`
          if (rows.length > 0 && failure === undefined) yield* emitReady(claim.document)
          return rows.length > 0
        })).pipe(Effect.orDie)
    }
  }))
}
