// Retrieval quality of the knowledge base on the labelled set in test/fixtures/knowledge/ (fictional company
// documents: product docs, policies, FAQs, an employee handbook; questions each with its one relevant document):
// MRR@10 of keyword, semantic (the offline `local-embedding` model) and hybrid search, through the repository's own
// queries and the search's own fusion (`Knowledge.fuse`). A document's rank is the rank of its first chunk.
import { Console, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { readdirSync, readFileSync } from "node:fs"
import * as Admin from "../../src/accounts/admin/Admin.ts"
import { chunkMarkdown } from "../../src/work/documents/Chunker.ts"
import { DocumentsRepo, type KnowledgeDocument, type SearchHit } from "../../src/work/documents/DocumentsRepo.ts"
import { fuse } from "../../src/work/documents/Knowledge.ts"
import { hashedEmbedding, localEmbeddingDimensions } from "../../src/models/llm/local/LocalEmbedding.ts"
import { newId } from "../../src/platform/Ids.ts"

const fixtures = new URL("../../test/fixtures/knowledge/", import.meta.url)
const model = "local-embedding"
/** Candidates each ranking brings to the fusion, as `Knowledge.search` asks for a limit of 10. */
const candidates = 20

interface Labelled {
  readonly question: string
  readonly document: string
}

/** 1/rank of the relevant document among the first ten hits (by its first chunk), 0 when absent. */
const reciprocalRank = (hits: ReadonlyArray<SearchHit>, relevant: string) => {
  const documents: Array<string> = []
  for (const hit of hits) if (!documents.includes(hit.documentId)) documents.push(hit.documentId)
  const rank = documents.slice(0, 10).indexOf(relevant)
  return rank < 0 ? 0 : 1 / (rank + 1)
}

export const retrievalQuality = (label: string) =>
  Effect.gen(function*() {
    const repo = yield* DocumentsRepo
    const sql = yield* SqlClient.SqlClient
    const tenant = yield* Admin.bootstrap({ organization: "Quality", company: "Quality", email: `quality-${Date.now()}@example.com` })
    const files = readdirSync(new URL("documents/", fixtures)).filter((name) => name.endsWith(".md")).sort()
    const questions: ReadonlyArray<Labelled> = JSON.parse(readFileSync(new URL("questions.json", fixtures), "utf8"))
    const ids = new Map<string, string>()
    for (const file of files) {
      const text = readFileSync(new URL(`documents/${file}`, fixtures), "utf8")
      const title = text.split("\n")[0]!.replace(/^#\s*/, "")
      const { chunks } = yield* chunkMarkdown(text, title)
      const now = new Date()
      const document: KnowledgeDocument = {
        id: newId("doc"), companyId: tenant.companyId, organizationId: tenant.organizationId, userId: null, projectId: null,
        title, type: "md", tags: [], tokens: chunks.reduce((sum, chunk) => sum + chunk.tokens, 0), chunkCount: chunks.length,
        status: "indexing", failure: null, embeddingModel: model, createdAt: now, updatedAt: now
      }
      yield* repo.create(document, text, chunks)
      ids.set(file, document.id)
      // Embedded as the indexer embeds (heading, blank line, content), under a lease as the indexer holds one.
      yield* sql`UPDATE knowledge_documents SET lease_token = 'quality' WHERE id = ${document.id}`
      const pending = yield* repo.pendingChunks(document.id, model, 1_000)
      yield* repo.storeEmbeddings({ document, token: "quality" }, model, pending.map((chunk) => ({
        chunkId: chunk.id,
        vector: hashedEmbedding(`${chunk.heading}\n\n${chunk.content}`, localEmbeddingDimensions)
      })))
    }
    yield* repo.ensureVectorIndex(localEmbeddingDimensions)
    const totals = { keyword: 0, semantic: 0, hybrid: 0 }
    for (const { question, document } of questions) {
      const relevant = ids.get(document)!
      const byKeyword = yield* repo.keywordSearch(tenant.companyId, {}, question, candidates)
      const vector = hashedEmbedding(question, localEmbeddingDimensions)
      const byMeaning = yield* repo.semanticSearch(tenant.companyId, {}, model, vector, candidates)
      totals.keyword += reciprocalRank(byKeyword.slice(0, 10), relevant)
      totals.semantic += reciprocalRank(byMeaning.slice(0, 10), relevant)
      totals.hybrid += reciprocalRank(fuse([byKeyword, byMeaning], 10), relevant)
    }
    const mrr = (total: number) => (total / questions.length).toFixed(3)
    yield* Console.log(
      `${label}: retrieval quality, ${files.length} documents, ${questions.length} questions: MRR@10 keyword ${mrr(totals.keyword)}, ` +
        `semantic (local-embedding) ${mrr(totals.semantic)}, hybrid ${mrr(totals.hybrid)}`
    )
    return { keyword: totals.keyword / questions.length, semantic: totals.semantic / questions.length, hybrid: totals.hybrid / questions.length }
  })
