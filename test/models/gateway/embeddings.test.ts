import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { loopbackServer, sdkClients } from "../../support/LoopbackServer.ts"
import { startStubUpstream, type StubUpstream, stubTokensPerText, stubVector } from "../../support/StubUpstream.ts"
import { usageHistory } from "../../support/Usage.ts"
import { pgliteStorage } from "../../support/TestServer.ts"
import { hashedEmbedding } from "../../../src/models/llm/local/LocalEmbedding.ts"

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/EmbeddingsUpstream") {}

const upstream = Layer.effect(
  Upstream,
  Effect.acquireRelease(Effect.promise(() => startStubUpstream()), (stub) => Effect.promise(stub.close))
)

const withUpstream = Layer.unwrap(Upstream.useSync((stub) =>
  loopbackServer(pgliteStorage, {
    llmModels: Option.some([
      { id: "chatty", provider: "openai", upstream: "stub-chat", tier: "balanced" },
      { id: "vectors", provider: "openai", upstream: "stub-embed", kind: "embedding", dimensions: 4, inputCreditsPerMillion: 200_000 }
    ]),
    openaiBaseUrl: Option.some(stub.url),
    llmMaxRetries: 0
  })
)).pipe(Layer.provideMerge(upstream))

/** The error a client call rejects with. */
const failure = <A>(promise: () => Promise<A>) => Effect.flip(Effect.tryPromise({ try: promise, catch: (error) => error as { status?: number; message: string } }))

it.layer(withUpstream, { timeout: 60_000, excludeTestServices: true })("embeddings through the official OpenAI SDK", (it) => {
  it.effect("embeds with an OpenAI-compatible upstream, base64 by default and floats on request, billed under chat", () =>
    Effect.gen(function*() {
      const { openai, tenant } = yield* sdkClients("embeddings")
      const stub = yield* Upstream
      // The SDK asks for base64 unless told otherwise and decodes the float32 bytes itself.
      const encoded = yield* Effect.promise(() => openai.embeddings.create({ model: "vectors", input: ["alpha", "beta gamma"] }))
      expect(encoded.object).toBe("list")
      expect(encoded.model).toBe("vectors")
      expect(encoded.data.map((item) => [item.index, item.embedding])).toEqual([
        [0, stubVector("alpha", 0, 4)],
        [1, stubVector("beta gamma", 1, 4)]
      ])
      expect(encoded.usage).toEqual({ prompt_tokens: 2 * stubTokensPerText, total_tokens: 2 * stubTokensPerText })
      const sent = stub.requests.at(-1)!
      expect(sent.path).toBe("/v1/embeddings")
      expect(sent.body).toMatchObject({ model: "stub-embed", input: ["alpha", "beta gamma"], encoding_format: "float", dimensions: 4 })

      const floats = yield* Effect.promise(() => openai.embeddings.create({ model: "vectors", input: "one text", encoding_format: "float" }))
      expect(floats.data).toEqual([{ object: "embedding", index: 0, embedding: stubVector("one text", 0, 4) }])

      const events = (yield* usageHistory(tenant.organizationId)).events
      expect(events.map((event) => [event.feature, event.model, event.inputTokens, event.outputTokens, event.credits])).toEqual([
        ["chat", "vectors", stubTokensPerText, 0, 1],
        ["chat", "vectors", 2 * stubTokensPerText, 0, 2]
      ])
    }))

  it.effect("refuses chat models, unknown models and bad input with 400 naming the problem", () =>
    Effect.gen(function*() {
      const { openai } = yield* sdkClients("embeddings-errors")
      const chatModel = yield* failure(() => openai.embeddings.create({ model: "chatty", input: "x" }))
      expect(chatModel.status).toBe(400)
      expect(chatModel.message).toContain("chatty is not an embedding model")
      const unknown = yield* failure(() => openai.embeddings.create({ model: "nope", input: "x" }))
      expect(unknown.status).toBe(400)
      expect(unknown.message).toContain("Unknown model")
      const empty = yield* failure(() => openai.embeddings.create({ model: "vectors", input: [] }))
      expect(empty.status).toBe(400)
      const chatWithEmbedder = yield* failure(() =>
        openai.chat.completions.create({ model: "vectors", messages: [{ role: "user", content: "hi" }] }))
      expect(chatWithEmbedder.status).toBe(400)
      expect(chatWithEmbedder.message).toContain("vectors is an embedding model")
    }))
})

it.layer(loopbackServer(pgliteStorage), { timeout: 60_000, excludeTestServices: true })("embeddings offline", (it) => {
  it.effect("the local catalog has local-embedding: deterministic hashed vectors that put texts sharing words together", () =>
    Effect.gen(function*() {
      const { openai } = yield* sdkClients("embeddings-local")
      const models = yield* Effect.promise(() => openai.models.list())
      expect(models.data.map((model) => model.id)).toContain("local-embedding")
      const answer = yield* Effect.promise(() =>
        openai.embeddings.create({
          model: "local-embedding",
          input: ["invoices are due in thirty days", "the invoice is due within thirty days", "penguins live in Antarctica"]
        }))
      const [a, b, c] = answer.data.map((item) => item.embedding)
      expect(a).toHaveLength(256)
      expect(a.map((value) => Math.fround(value))).toEqual(hashedEmbedding("invoices are due in thirty days", 256).map(Math.fround))
      const cosine = (x: ReadonlyArray<number>, y: ReadonlyArray<number>) => x.reduce((sum, value, i) => sum + value * y[i]!, 0)
      expect(cosine(a!, b!)).toBeGreaterThan(0.5)
      expect(cosine(a!, c!)).toBeLessThan(0.2)
      expect(answer.usage.prompt_tokens).toBeGreaterThan(10)
    }))
})

describe("the hashed local embedding", () => {
  it("is unit length and stable", () => {
    const vector = hashedEmbedding("Quarterly report: revenue grew", 64)
    expect(vector.reduce((sum, value) => sum + value * value, 0)).toBeCloseTo(1, 10)
    expect(hashedEmbedding("Quarterly report: revenue grew", 64)).toEqual(vector)
    expect(hashedEmbedding("", 8)).toEqual(new Array(8).fill(0))
  })
})
