import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { DocumentsRepo } from "../../../src/work/documents/DocumentsRepo.ts"
import { Indexer } from "../../../src/work/documents/Indexer.ts"
import { EmbeddingsModel } from "../../../src/work/documents/EmbeddingsModel.ts"
import { KnowledgeConfig } from "../../../src/work/documents/KnowledgeConfig.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { addPerson, backends, client, seedTenant, testServer } from "../../support/TestServer.ts"
import { uploadForm } from "../../support/Uploads.ts"
import { expectErrorResponse, postJson, send } from "../../support/Http.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"
import { spend } from "../../support/Billing.ts"

const leaseMs = 60_000

/** The service with the indexer callable by hand (no background worker), on `TestClock`. */
const knowledgeServer = <A, E>(storage: Layer.Layer<A, E>, overrides: Parameters<typeof testServer>[1] = {}) =>
  Indexer.layer.pipe(
    Layer.provideMerge(EmbeddingsModel.layer),
    Layer.provideMerge(KnowledgeConfig.layerWith({ indexerEnabled: false, leaseMs, batchSize: 4 })),
    Layer.provideMerge(testServer(onLiveClock(storage), overrides))
  )

const runIndexer = Indexer.use((indexer) => indexer.runDue)

const refunds = `# Refund policy

Customers may return any product within **30 days** of delivery for a full refund.

## Damaged goods

Damaged goods are replaced free of charge; send a photo of the damage to support.

## Shipping costs

Return shipping is paid by the customer unless the goods arrived damaged.`

const onboarding = `# Onboarding guide

New employees receive a laptop on their first day.

## Accounts

IT creates e-mail and chat accounts before the first day.`

describe.each(backends)("the knowledge base on $name", ({ storage }) => {
  it.layer(knowledgeServer(storage), { timeout: 60_000 })("with the offline embedding model", (it) => {
    it.effect("stores, chunks, embeds in the background and searches by keyword, meaning and both", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("knowledge")
        const api = yield* client({ apiKey: tenant.apiKey })
        const created = yield* api.knowledge.create({ payload: { title: "Refunds", content: refunds, tags: ["policies", "policies", "support"] } })
        const [document] = created.documents
        expect(document).toMatchObject({ title: "Refunds", type: "md", tags: ["policies", "support"], projectId: null, status: "indexing", failure: null })
        expect(document!.chunkCount).toBe(1)
        expect(document!.tokens).toBeGreaterThan(40)
        yield* api.knowledge.create({ payload: { title: "Onboarding", content: onboarding, tags: ["hr"] } })

        // Keyword search works before the embeddings exist.
        const early = yield* api.knowledge.search({ payload: { query: "damaged goods", mode: "keyword" } })
        expect(early.results[0]).toMatchObject({ documentId: document!.id, title: "Refunds", chunkId: `${document!.id}_0` })
        expect(early.results[0]!.highlights.join(" ")).toContain("**Damaged**")

        expect(yield* runIndexer).toBe(2)
        const ready = yield* api.knowledge.get({ params: { documentId: document!.id } })
        expect(ready.status).toBe("ready")
        const billed = (yield* usageHistory(tenant.organizationId)).events.filter((event) => event.feature === "documents")
        expect(billed.map((event) => event.model)).toEqual(["local-embedding", "local-embedding"])

        const semantic = yield* api.knowledge.search({ payload: { query: "refund for a damaged product", mode: "semantic", limit: 1 } })
        expect(semantic.results).toHaveLength(1)
        expect(semantic.results[0]!.documentId).toBe(document!.id)
        const hybrid = yield* api.knowledge.search({ payload: { query: "laptop on the first day" } })
        expect(hybrid.results[0]!.title).toBe("Onboarding")
        expect(hybrid.results.map((result) => result.title)).toContain("Refunds")
        const tagged = yield* api.knowledge.search({ payload: { query: "first day", tag: "policies", mode: "keyword" } })
        expect(tagged.results).toEqual([])
        const taggedHr = yield* api.knowledge.search({ payload: { query: "first day", tag: "hr", mode: "keyword" } })
        expect(taggedHr.results.map((result) => result.title)).toEqual(["Onboarding"])
        expect((yield* api.knowledge.search({ payload: { query: "damaged goods", documentIds: [] } })).results).toEqual([])
        const onlyOne = yield* api.knowledge.search({ payload: { query: "day", documentIds: [document!.id] } })
        expect(onlyOne.results.every((result) => result.documentId === document!.id)).toBe(true)

        const content = yield* api.knowledge.getContent({ params: { documentId: document!.id } })
        expect(content.content).toBe(refunds)
        const listed = yield* api.knowledge.list({ query: { tag: "hr" } })
        expect(listed.items.map((item) => item.title)).toEqual(["Onboarding"])
        const searched = yield* api.knowledge.list({ query: { search: "REFUND" } })
        expect(searched.total).toBe(1)

        const removed = yield* api.knowledge.delete({ params: { documentId: document!.id } })
        expect(removed.id).toBe(document!.id)
        const after = yield* api.knowledge.search({ payload: { query: "damaged goods" } })
        expect(after.results.map((result) => result.title)).not.toContain("Refunds")
        const gone = yield* Effect.flip(api.knowledge.get({ params: { documentId: document!.id } }))
        expect(gone._tag).toBe("NotFound")
      }))

    it.effect("never returns another company's chunk, by keyword or by vector", () =>
      Effect.gen(function*() {
        const ours = yield* seedTenant("ours")
        const theirs = yield* seedTenant("theirs")
        const ourApi = yield* client({ apiKey: ours.apiKey })
        const theirApi = yield* client({ apiKey: theirs.apiKey })
        const secret = yield* theirApi.knowledge.create({ payload: { title: "Secret", content: refunds } })
        const mine = yield* ourApi.knowledge.create({ payload: { title: "Mine", content: onboarding } })
        yield* runIndexer
        yield* runIndexer
        // Their document is the nearest vector to this query; ours is far from it.
        for (const mode of ["semantic", "keyword", "hybrid"] as const) {
          const found = yield* ourApi.knowledge.search({ payload: { query: refunds, mode, limit: 50 } })
          expect(found.results.map((result) => result.documentId)).not.toContain(secret.documents[0]!.id)
        }
        const semantic = yield* ourApi.knowledge.search({ payload: { query: refunds, mode: "semantic", limit: 50 } })
        expect(semantic.results.map((result) => result.documentId)).toEqual([mine.documents[0]!.id])
        const foreign = yield* Effect.flip(ourApi.knowledge.getContent({ params: { documentId: secret.documents[0]!.id } }))
        expect(foreign._tag).toBe("NotFound")
        const foreignDelete = yield* Effect.flip(ourApi.knowledge.delete({ params: { documentId: secret.documents[0]!.id } }))
        expect(foreignDelete._tag).toBe("NotFound")
      }))

    it.effect("uploads files through the converters, scoped to a project", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("uploads")
        const api = yield* client({ apiKey: tenant.apiKey })
        const project = yield* api.projects.create({ payload: { name: "Support" } })
        const uploaded = yield* api.knowledge.create({
          payload: uploadForm([
            { name: "faq.md", bytes: "# FAQ\n\nOpening hours are nine to five." },
            { name: "prices.csv", bytes: "product,price\nTea,3\nCoffee,4\n" }
          ], { tags: "faq, prices", projectId: project.id })
        })
        expect(uploaded.documents.map((document) => [document.title, document.type, document.tags, document.projectId])).toEqual([
          ["faq.md", "md", ["faq", "prices"], project.id],
          ["prices.csv", "csv", ["faq", "prices"], project.id]
        ])
        const loose = yield* api.knowledge.create({ payload: { title: "Company hours", content: "Opening hours differ on holidays." } })
        const scoped = yield* api.knowledge.search({ payload: { query: "opening hours", projectId: project.id, mode: "keyword" } })
        expect(scoped.results.map((result) => result.documentId).sort()).toEqual([uploaded.documents[0]!.id, loose.documents[0]!.id].sort())
        const unknownProject = yield* Effect.flip(api.knowledge.search({ payload: { query: "hours", projectId: "prj_nope" } }))
        expect(unknownProject._tag).toBe("NotFound")
        const twoWithTitle = yield* Effect.flip(api.knowledge.create({
          payload: uploadForm([{ name: "a.md", bytes: "# A" }, { name: "b.md", bytes: "# B" }], { title: "Both" })
        }))
        expect(twoWithTitle).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("title can only be given with one file") })
      }))

    it.effect("answers 400 naming the problem for bad input, and 403 for viewers' writes", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("bad-input")
        const refused = (body: unknown, path = "/api/v0/documents/search") => send(postJson(path, body, tenant.apiKey))
        expectErrorResponse(yield* refused({ query: "   " }), 400, /query/)
        expectErrorResponse(yield* refused({ query: "x".repeat(2_001) }), 400, /query/)
        expectErrorResponse(yield* refused({}), 400, /query/)
        expectErrorResponse(yield* refused({ query: "x", limit: 0 }), 400, /limit/)
        expectErrorResponse(yield* refused({ query: "x", limit: 51 }), 400, /limit/)
        expectErrorResponse(yield* refused({ query: "x", mode: "fuzzy" }), 400, /mode/)
        expectErrorResponse(yield* refused({ query: "x", limti: 5 }), 400, /limti/)
        expectErrorResponse(yield* refused({ title: "t", content: "a\u0000b" }, "/api/v0/documents"), 400, /NUL/)
        expectErrorResponse(yield* refused({ title: "t" }, "/api/v0/documents"), 400, /content/)
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const viewerApi = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        const forbidden = yield* Effect.flip(viewerApi.knowledge.create({ payload: { title: "t", content: "text" } }))
        expect(forbidden._tag).toBe("Forbidden")
        expect((yield* viewerApi.knowledge.search({ payload: { query: "text" } })).results).toEqual([])
      }))

    it.effect("embeds each document once across indexers, and takes over a crashed one's after its lease", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("leases")
        const api = yield* client({ apiKey: tenant.apiKey })
        const start = Date.parse("2030-01-01T00:00:00Z")
        yield* TestClock.setTime(start)
        while ((yield* runIndexer) > 0) yield* Effect.void
        const created = yield* api.knowledge.create({ payload: { title: "Long", content: Array.from({ length: 12 }, (_, i) => `## Part ${i}\n\n${"word ".repeat(300)}`).join("\n\n") } })
        expect(created.documents[0]!.chunkCount).toBeGreaterThan(4)
        // A process claims it and dies before embedding anything.
        const repo = yield* DocumentsRepo
        const crashed = yield* repo.claimIndexing(new Date(start), new Date(start + leaseMs), 10)
        expect(crashed.map((claim) => claim.document.id)).toEqual([created.documents[0]!.id])
        expect(yield* Effect.all([runIndexer, runIndexer], { concurrency: 2 })).toEqual([0, 0])
        yield* TestClock.setTime(start + leaseMs + 1)
        const claimed = yield* Effect.all([runIndexer, runIndexer], { concurrency: 2 })
        expect(claimed.toSorted()).toEqual([0, 1])
        expect((yield* api.knowledge.get({ params: { documentId: created.documents[0]!.id } })).status).toBe("ready")
        // The dead process's lease is void: it can store nothing.
        expect(yield* repo.storeEmbeddings(crashed[0]!, "local-embedding", [])).toBe(false)
        const batches = (yield* usageHistory(tenant.organizationId)).events.filter((event) => event.feature === "documents")
        expect(batches).toHaveLength(Math.ceil(created.documents[0]!.chunkCount / 4))
      }))

    it.effect("fails a document whose embeddings cannot be paid for, which stays searchable by keyword", () =>
      Effect.gen(function*() {
        while ((yield* runIndexer) > 0) yield* Effect.void
        const tenant = yield* seedTenant("broke")
        const api = yield* client({ apiKey: tenant.apiKey })
        const organization = Option.getOrThrow(yield* settledOrganization(tenant.organizationId))
        yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }, {
          feature: "chat",
          credits: organization.creditLimit - organization.creditUsage
        })
        const created = yield* api.knowledge.create({ payload: { title: "Budget", content: "Budget meeting notes for the quarter." } })
        expect(yield* runIndexer).toBe(1)
        const failed = yield* api.knowledge.get({ params: { documentId: created.documents[0]!.id } })
        expect(failed).toMatchObject({ status: "failed", failure: "Insufficient credits" })
        const found = yield* api.knowledge.search({ payload: { query: "budget meeting", mode: "keyword" } })
        expect(found.results.map((result) => result.documentId)).toEqual([created.documents[0]!.id])
        const semantic = yield* Effect.flip(api.knowledge.search({ payload: { query: "budget meeting", mode: "semantic" } }))
        expect(semantic).toMatchObject({ _tag: "Forbidden", error: "Insufficient credits" })
      }))
  })

  it.layer(knowledgeServer(storage, { llmModels: Option.some([{ id: "chat-only", provider: "local", tier: "balanced" }]) }), { timeout: 60_000 })(
    "without an embeddings model",
    (it) => {
      it.effect("documents are ready at once, hybrid is keyword search and semantic names the missing setting", () =>
        Effect.gen(function*() {
          const tenant = yield* seedTenant("keyword-only")
          const api = yield* client({ apiKey: tenant.apiKey })
          const created = yield* api.knowledge.create({ payload: { title: "Refunds", content: refunds } })
          expect(created.documents[0]!.status).toBe("ready")
          expect(yield* runIndexer).toBe(0)
          const hybrid = yield* api.knowledge.search({ payload: { query: "shipping costs" } })
          expect(hybrid.results[0]!.documentId).toBe(created.documents[0]!.id)
          const semantic = yield* Effect.flip(api.knowledge.search({ payload: { query: "shipping", mode: "semantic" } }))
          expect(semantic).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("EMBEDDINGS_MODEL") })
        }))
    }
  )
})
