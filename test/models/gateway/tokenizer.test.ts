import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { prompt } from "../../../src/models/llm/Llm.ts"
import { longestRun, offThreadCharacters, piecesOf, tokenCounter, TokenizerThreads } from "../../../src/models/llm/Tokenizer.ts"
import { longestTurn } from "../../support/EventLoop.ts"

const asPlainText = { disallowedSpecial: new Set<string>() }

/** Deterministic pseudo-random lowercase letters. */
const letters = (length: number, seed = 7) => {
  let state = seed
  let text = ""
  for (let i = 0; i < length; i++) {
    state = (state * 16807) % 2147483647
    text += String.fromCharCode(97 + (state % 26))
  }
  return text
}

const prose = Array.from({ length: 3_000 }, (_, i) => `Sentence ${i} says: the quick brown fox, again!\n`).join("")

describe("the shared tokenizer", () => {
  it("cuts text into pieces that join back to it, with no run longer than the limit", () => {
    const text = `${prose}  ${"x".repeat(1_000)} ${" ".repeat(500)}${"😀".repeat(300)}end`
    const pieces = [...piecesOf(text)]
    expect(pieces.join("")).toBe(text)
    for (const piece of pieces) {
      expect(Math.max(...piece.split(/(\s+)/).map((run) => run.length))).toBeLessThanOrEqual(longestRun)
      // never inside a surrogate pair: no piece starts with a low surrogate
      const first = piece.charCodeAt(0)
      expect(first >= 0xdc00 && first <= 0xdfff).toBe(false)
    }
  })

  it.effect("counts ordinary text exactly as the encoding does, even when cut into pieces", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      expect([...piecesOf(prose)].length).toBeGreaterThan(1)
      expect(yield* counter.text(prose)).toBe(countTokens(prose, asPlainText))
      expect(yield* counter.text("Hello, world")).toBe(countTokens("Hello, world", asPlainText))
      expect(yield* counter.text("")).toBe(0)
    }))

  it.effect("counts an over-long word close to its exact count: at most one token more per slice", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      const word = letters(6_000)
      const exact = countTokens(word, asPlainText)
      const counted = yield* counter.text(word)
      const slices = Math.ceil(word.length / longestRun)
      expect(counted).toBeGreaterThanOrEqual(exact)
      expect(counted).toBeLessThanOrEqual(exact + slices)
      const huge = yield* counter.text("a".repeat(300_000))
      // eight a's are one token, as in the whole word (a 16,000-character one is 2,000 tokens)
      expect(countTokens("a".repeat(16_000), asPlainText)).toBe(2_000)
      expect(huge).toBe(37_500)
    }))

  it.effect("lets the event loop turn while it counts a large body", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      let turns = 0
      let counting = true
      const tick = () => {
        if (!counting) return
        turns += 1
        setImmediate(tick)
      }
      setImmediate(tick)
      const tokens = yield* counter.request(prompt("local-fastest", `${letters(300_000)} ${prose}`))
      counting = false
      expect(tokens).toBeGreaterThan(50_000)
      // the count yielded to the loop many times (a synchronous count lets it turn none)
      expect(turns).toBeGreaterThan(20)
    }))

  it.effect("counts a large text on a worker thread to the same number as its pieces counted on this thread", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      const texts = [letters(300_000), prose, `${prose}${"😀".repeat(20_000)} ${"a".repeat(50_000)}`, "漢字かな".repeat(10_000)]
      for (const text of texts) {
        const pieces = [...piecesOf(text)]
        expect(text.length).toBeGreaterThan(offThreadCharacters)
        expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(offThreadCharacters)
        let here = 0
        for (const piece of pieces) here += yield* counter.text(piece)
        expect(yield* counter.text(text)).toBe(here)
      }
    }).pipe(Effect.provide(TokenizerThreads)))

  it.effect("holds the event loop for a few milliseconds of CPU at a time, however slow the text is to count", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      // Random letters are the slowest text to count: every 128-letter slice is merged pair by pair.
      // (A seed no other test uses: slices counted before are answered from the merge cache.)
      const word = letters(300_000, 13)
      const { longestMs } = yield* longestTurn(counter.text(word))
      // The budget is 5 ms of (wall-clock) time per turn, plus at most one slice.
      expect(longestMs).toBeLessThan(10)
      // Counted on a worker thread, another such word costs this thread a small part of the ~200 ms it takes.
      const startedAt = process.threadCpuUsage()
      yield* counter.text(letters(300_000, 17))
      const spent = process.threadCpuUsage(startedAt)
      expect((spent.user + spent.system) / 1_000).toBeLessThan(40)
    }).pipe(Effect.provide(TokenizerThreads)))

  it.effect("keeps whole words within a token limit, in time linear in the text", () =>
    Effect.gen(function*() {
      const counter = yield* tokenCounter
      const kept = yield* counter.wordsWithin("one two three four five", 3)
      expect(kept).toBe("one two three")
      const long = `${"word ".repeat(200_000)}`
      const cut = yield* counter.wordsWithin(long, 50_000)
      expect(yield* counter.text(cut)).toBeLessThanOrEqual(50_000)
      expect(cut.length).toBeGreaterThan(200_000)
    }))
})
