import { Effect } from "effect"
import type { CatalogModel, EmbeddingRequest, EmbeddingResponse } from "../Llm.ts"
import { tokenCounter } from "../Tokenizer.ts"

/**
 * The offline `local` embedding model: a deterministic hashed bag of words
 * and character trigrams (the "hashing trick"), L2-normalised, of the
 * model's `dimensions` (default 256). It knows no meaning — synonyms do not
 * meet — but texts sharing words and word parts land near each other, so
 * semantic and hybrid search work, and can be tested, with no model
 * provider. Real embedding models (OpenAI, Ollama, vLLM, TEI) rank far better.
 */

export const localEmbeddingDimensions = 256

/** Word parts weigh less than whole words: a shared trigram is weaker evidence than a shared word. */
const trigramWeight = 0.5

const words = /[\p{L}\p{N}]+/gu

/** 32-bit FNV-1a. */
const fnv1a = (text: string) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

export const hashedEmbedding = (text: string, dimensions: number): Array<number> => {
  const vector = new Float64Array(dimensions)
  const add = (feature: string, weight: number) => {
    const hash = fnv1a(feature)
    // The top bit picks the sign, so that collisions cancel out rather than pile up.
    vector[hash % dimensions] += hash & 0x80000000 ? -weight : weight
  }
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(words)) {
    const word = match[0]
    add(word, 1)
    const padded = `#${word}#`
    for (let i = 0; i + 3 <= padded.length; i++) add(padded.slice(i, i + 3), trigramWeight)
  }
  let norm = 0
  for (const value of vector) norm += value * value
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm)
  return Array.from(vector, (value) => value * scale)
}

export const localEmbed = (request: EmbeddingRequest, model: CatalogModel): Effect.Effect<EmbeddingResponse> =>
  Effect.gen(function*() {
    const counter = yield* tokenCounter
    const dimensions = request.dimensions ?? model.dimensions ?? localEmbeddingDimensions
    const embeddings: Array<Array<number>> = []
    let inputTokens = 0
    for (const text of request.input) {
      inputTokens += yield* counter.text(text)
      embeddings.push(hashedEmbedding(text, dimensions))
      // One input at a time, so that a long list never holds the event loop.
      yield* Effect.yieldNow
    }
    return { model: model.id, embeddings, inputTokens }
  })
