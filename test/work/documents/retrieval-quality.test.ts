import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { retrievalQuality } from "../../../scripts/bench/retrieval-quality.ts"
import { backends } from "../../support/TestServer.ts"

/** The labelled retrieval set (test/fixtures/knowledge/) and the ranking it guards: hybrid never below keyword. */

const fixtures = new URL("../../fixtures/knowledge/", import.meta.url)

it("the labelled set has at least 30 documents and 60 questions, each naming one of them", () => {
  const documents = readdirSync(new URL("documents/", fixtures)).filter((name) => name.endsWith(".md"))
  const questions: Array<{ question: string; document: string }> = JSON.parse(readFileSync(new URL("questions.json", fixtures), "utf8"))
  expect(documents.length).toBeGreaterThanOrEqual(30)
  expect(questions.length).toBeGreaterThanOrEqual(60)
  for (const { question, document } of questions) {
    expect(question.trim()).not.toBe("")
    expect(documents).toContain(document)
  }
  expect(new Set(questions.map((q) => q.question)).size).toBe(questions.length)
  // Every document is the answer to some question.
  expect(new Set(questions.map((q) => q.document)).size).toBe(documents.length)
})

describe.each(backends)("retrieval quality on $name", ({ storage }) => {
  it.layer(storage, { timeout: 120_000 })((it) => {
    it.effect("hybrid search ranks the relevant document at least as well as keyword search (MRR@10)", () =>
      Effect.gen(function*() {
        const mrr = yield* retrievalQuality("test")
        expect(mrr.hybrid).toBeGreaterThanOrEqual(mrr.keyword)
        expect(mrr.semantic).toBeGreaterThan(0.5)
        expect(mrr.hybrid).toBeGreaterThan(0.7)
      }))
  })
})
