// `npm run bench:knowledge` (under scripts/with-postgres.sh, or with BENCH_DATABASE_URL set, for
// PostgreSQL as well as PGlite): the knowledge base's search and ingest.
// - Keyword search over BENCH_CHUNKS chunks (default 100,000) of a synthetic corpus (Zipf-distributed
//   words), 20 concurrent searches: p50/p99 and searches/s through the repository
//   (`DocumentsRepo.keywordSearch`), next to the same SQL run directly through the driver (PGlite's
//   session; the PostgreSQL client's `unsafe`), in the same run.
// - HNSW recall@10 of semantic search against exact search on the same BENCH_VECTORS vectors (default
//   10,000; the offline hashed embedding, 256 dimensions).
// - Ingest on PGlite: Markdown chunked (the project's tokenizer) and keyword-indexed, MB/s.
// - Retrieval quality (first, on an empty database): MRR@10 of keyword, semantic and hybrid search on the labelled
//   set of test/fixtures/knowledge/ (`bench/retrieval-quality.ts`).
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Console, Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { sqlStorage } from "../src/app/Storage.ts"
import { type Chunk, chunkMarkdown } from "../src/work/documents/Chunker.ts"
import { DocumentsRepo, type KnowledgeDocument } from "../src/work/documents/DocumentsRepo.ts"
import { hashedEmbedding } from "../src/models/llm/local/LocalEmbedding.ts"
import { newId } from "../src/platform/Ids.ts"
import * as Pglite from "../src/storage/PgliteClient.ts"
import { retrievalQuality } from "./bench/retrieval-quality.ts"
import { percentile } from "./bench/stats.ts"

const totalChunks = Number(process.env.BENCH_CHUNKS ?? 100_000)
const totalVectors = Number(process.env.BENCH_VECTORS ?? 10_000)
const concurrency = 20
const searchesPerWorker = Number(process.env.BENCH_SEARCHES ?? 25)
const dimensions = 256

/** A deterministic pseudo-random sequence (mulberry32). */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "len", "mar", "sol", "tur", "bel", "cor", "fin", "gra"]
const next = random(42)
const vocabulary = Array.from({ length: 8_000 }, (_, i) =>
  Array.from({ length: 2 + (i % 3) }, (_, j) => syllables[(i * 7 + j * 13 + Math.floor(i / 20)) % syllables.length]).join("") + i.toString(36))
/** Zipf-like: word i is drawn with probability ∝ 1/(i+1). */
const zipfWord = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(Math.exp(next() * Math.log(vocabulary.length + 1)) - 1))]!
const sentence = (words: number) => Array.from({ length: words }, zipfWord).join(" ") + "."

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* effect
    return { result, ms: performance.now() - started }
  })

/** 20 workers each running `searches` searches; latencies and searches per second. */
const concurrent = <E, R>(search: (query: string) => Effect.Effect<unknown, E, R>, queries: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    const started = performance.now()
    yield* Effect.forEach(Array.from({ length: concurrency }, (_, worker) => worker), (worker) =>
      Effect.gen(function*() {
        for (let i = 0; i < searchesPerWorker; i++) {
          times.push((yield* timed(search(queries[(worker * searchesPerWorker + i) % queries.length]!))).ms)
        }
      }), { concurrency: "unbounded", discard: true })
    const wallMs = performance.now() - started
    times.sort((a, b) => a - b)
    return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), perSecond: times.length / (wallMs / 1000) }
  })

const documentFor = (companyId: string, organizationId: string, title: string, chunks: ReadonlyArray<Chunk>): KnowledgeDocument => {
  const now = new Date()
  return {
    id: newId("doc"), companyId, organizationId, userId: null, projectId: null, title, type: "md", tags: [],
    tokens: chunks.reduce((sum, chunk) => sum + chunk.tokens, 0), chunkCount: chunks.length, status: "ready",
    failure: null, embeddingModel: null, createdAt: now, updatedAt: now
  }
}

/** The repository's keyword SQL, as `DocumentsRepo.keywordSearch` sends it without filters. */
const keywordSql = `SELECT c.id AS chunk_id, c.document_id, (SELECT d.title FROM knowledge_documents d WHERE d.id = c.document_id) AS title,
    c.content, ts_rank_cd(c.search, websearch_to_tsquery('english', $1)) AS score
  FROM knowledge_chunks c WHERE c.company_id = $2 AND c.search @@ websearch_to_tsquery('english', $1) ORDER BY score DESC, c.id LIMIT $3`

const benchmark = (backend: "pglite" | "postgres") =>
  Effect.gen(function*() {
    yield* retrievalQuality(backend)
    const tenant = yield* Admin.bootstrap({ organization: "Bench", company: "Bench", email: `bench-${Date.now()}@example.com` })
    const repo = yield* DocumentsRepo
    const sql = yield* SqlClient.SqlClient

    // Load: documents of 100 chunks of ~60 words each, inserted as the repository inserts them.
    const perDocument = 100
    const load = yield* timed(Effect.forEach(Array.from({ length: Math.ceil(totalChunks / perDocument) }, (_, i) => i), (i) => {
      const chunks = Array.from({ length: perDocument }, (_, ordinal) => {
        const content = `${sentence(20)} ${sentence(20)} ${sentence(20)}`
        return { ordinal, heading: `Section ${ordinal}`, content, tokens: 120 }
      })
      return repo.create(documentFor(tenant.companyId, tenant.organizationId, `Document ${i}`, chunks), "", chunks)
    }, { discard: true }))
    yield* Console.log(`\n${backend}: loaded ${totalChunks} chunks in ${(load.ms / 1000).toFixed(1)} s`)

    const queries = Array.from({ length: 200 }, () => `${vocabulary[50 + Math.floor(next() * 2_000)]} ${vocabulary[50 + Math.floor(next() * 2_000)]}`)
    const session = Option.getOrUndefined(yield* Effect.serviceOption(Pglite.Pglite))
    const driver = (query: string): Effect.Effect<unknown> =>
      session === undefined
        ? Effect.orDie(sql.unsafe(keywordSql, [query, tenant.companyId, 10]))
        : Effect.promise(() => session.run(keywordSql, [query, tenant.companyId, 10], "object"))
    // Warm both paths (prepared statements, the database's caches) with every query, then measure them in
    // turns, twice, keeping the second turn: neither path profits from pages the other one loaded.
    yield* Effect.forEach(queries, (query) => Effect.all([repo.keywordSearch(tenant.companyId, {}, query, 10), driver(query)]), { discard: true })
    const viaRepository = (query: string) => repo.keywordSearch(tenant.companyId, {}, query, 10)
    yield* concurrent(driver, queries)
    yield* concurrent(viaRepository, queries)
    const viaDriver = yield* concurrent(driver, queries)
    const viaRepo = yield* concurrent(viaRepository, queries)
    yield* Console.log(
      `${backend}: keyword search, ${concurrency} concurrent, ${totalChunks} chunks: repository p50 ${viaRepo.p50.toFixed(1)} ms, p99 ${viaRepo.p99.toFixed(1)} ms, ` +
        `${viaRepo.perSecond.toFixed(0)}/s; same SQL through the driver p50 ${viaDriver.p50.toFixed(1)} ms, p99 ${viaDriver.p99.toFixed(1)} ms, ` +
        `${viaDriver.perSecond.toFixed(0)}/s; ratio ${(viaRepo.perSecond / viaDriver.perSecond * 100).toFixed(0)} %`
    )

    // HNSW recall@10 against exact search over the same vectors.
    const rows = yield* sql<{ readonly id: string; readonly content: string }>`SELECT id, content FROM knowledge_chunks
      WHERE company_id = ${tenant.companyId} ORDER BY id LIMIT ${totalVectors}`
    const claim = { document: documentFor(tenant.companyId, tenant.organizationId, "", []), token: "bench" }
    yield* sql`UPDATE knowledge_documents SET status = 'indexing', lease_token = 'bench' WHERE company_id = ${tenant.companyId}`
    const stored = yield* timed(Effect.forEach(Array.from({ length: Math.ceil(rows.length / 1_000) }, (_, i) => rows.slice(i * 1_000, i * 1_000 + 1_000)), (batch) =>
      Effect.gen(function*() {
        for (const owner of new Set(batch.map((row) => row.id.slice(0, row.id.lastIndexOf("_"))))) {
          const mine = batch.filter((row) => row.id.startsWith(`${owner}_`))
          yield* repo.storeEmbeddings({ ...claim, document: { ...claim.document, id: owner } }, "bench", mine.map((row) => ({ chunkId: row.id, vector: hashedEmbedding(row.content, dimensions) })))
        }
      }), { discard: true }))
    const indexed = yield* timed(repo.ensureVectorIndex(dimensions))
    yield* Console.log(`${backend}: ${rows.length} vectors stored in ${(stored.ms / 1000).toFixed(1)} s, HNSW index built in ${(indexed.ms / 1000).toFixed(1)} s`)
    let found = 0
    const probes = 100
    const semanticTimes: Array<number> = []
    for (let i = 0; i < probes; i++) {
      const vector = hashedEmbedding(queries[i]!, dimensions)
      const approximate = yield* timed(repo.semanticSearch(tenant.companyId, {}, "bench", vector, 10))
      semanticTimes.push(approximate.ms)
      const exact = yield* sql<{ readonly chunk_id: string }>`SELECT chunk_id FROM knowledge_embeddings
        WHERE company_id = ${tenant.companyId} AND model = 'bench'
        ORDER BY (embedding::vector(256) <=> ${`[${vector.join(",")}]`}::vector(256)) + 0 LIMIT 10`
      const truth = new Set(exact.map((row) => row.chunk_id))
      found += approximate.result.filter((hit) => truth.has(hit.chunkId)).length
    }
    semanticTimes.sort((a, b) => a - b)
    yield* Console.log(`${backend}: HNSW recall@10 against exact search, ${probes} queries over ${rows.length} vectors: ${(found / (probes * 10)).toFixed(3)} ` +
      `(semantic search p50 ${percentile(semanticTimes, 0.5).toFixed(1)} ms, p99 ${percentile(semanticTimes, 0.99).toFixed(1)} ms, one at a time)`)

    if (backend === "pglite") {
      // English prose (the tokenizer's merges are tuned for real words, not for the synthetic ones above).
      const english = "the customer may return any product within thirty days of delivery for a full refund while damaged goods are replaced free of charge and our support team answers every question about orders invoices shipping and accounts".split(" ")
      const prose = () => Array.from({ length: 18 }, () => english[Math.floor(next() * english.length)]).join(" ") + "."
      const markdown = Array.from({ length: 10 }, (_, d) =>
        Array.from({ length: 120 }, (_, s) => `## Topic ${d}.${s}\n\n${Array.from({ length: 6 }, () => `${prose()} ${prose()}`).join("\n\n")}`).join("\n\n"))
      // The tokenizer loads on first use: not part of the measurement.
      yield* chunkMarkdown("warm up", "warm up")
      const bytes = markdown.reduce((sum, text) => sum + Buffer.byteLength(text), 0)
      const ingested = yield* timed(Effect.forEach(markdown, (text, i) =>
        Effect.flatMap(chunkMarkdown(text, `Ingest ${i}`), ({ chunks }) =>
          repo.create(documentFor(tenant.companyId, tenant.organizationId, `Ingest ${i}`, chunks), text, chunks)), { discard: true }))
      yield* Console.log(`${backend}: ingest (chunked with the tokenizer, keyword-indexed) ${(bytes / 1e6).toFixed(1)} MB of Markdown: ` +
        `${(bytes / 1e6 / (ingested.ms / 1000)).toFixed(2)} MB/s`)
    }
  })

const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL

NodeRuntime.runMain(Effect.gen(function*() {
  yield* Effect.provide(benchmark("pglite"), sqlStorage(Pglite.layerFrom(Pglite.open(undefined)), "pglite"))
  if (postgresUrl === undefined) {
    yield* Console.log("\nPostgreSQL: not measured (set BENCH_DATABASE_URL or run under scripts/with-postgres.sh)")
    return
  }
  yield* Effect.provide(benchmark("postgres"), sqlStorage(PgClient.layer({ url: Redacted.make(postgresUrl) }), "postgres"))
}))
