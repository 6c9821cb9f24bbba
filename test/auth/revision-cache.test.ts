import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeRevisionCache, RequestRevision } from "../../src/auth/RevisionCache.ts"

/** A read that counts how often it ran and answers `value`. */
const counted = <A>(value: A) => {
  const counter = { reads: 0 }
  return { counter, read: Effect.sync(() => (counter.reads++, value)) }
}

const at = (revision: number) => Effect.provideService(RequestRevision, { revision })

describe("RevisionCache", () => {
  it.effect("answers from the cache at the revision it read at, and reads anew at any other", () =>
    Effect.gen(function*() {
      const cache = makeRevisionCache<string>(10)
      const { counter, read } = counted("v")
      expect(yield* cache.through("k", () => read).pipe(at(1))).toBe("v")
      expect(yield* cache.through("k", () => read).pipe(at(1))).toBe("v")
      expect(counter.reads).toBe(1)
      yield* cache.through("k", () => read).pipe(at(2))
      expect(counter.reads).toBe(2)
      yield* cache.through("k", () => read).pipe(at(2))
      expect(counter.reads).toBe(2)
    }))

  it.effect("a read that finishes late at an older revision does not replace a newer entry", () =>
    Effect.gen(function*() {
      const cache = makeRevisionCache<string>(10)
      yield* cache.through("k", () => Effect.succeed("new")).pipe(at(5))
      yield* cache.through("k", () => Effect.succeed("old")).pipe(at(4))
      expect(yield* cache.through("k", () => Effect.succeed("unused")).pipe(at(5))).toBe("new")
    }))

  it.effect("keeps at most its capacity, dropping the least recently used", () =>
    Effect.gen(function*() {
      const cache = makeRevisionCache<string>(2)
      const a = counted("a")
      const b = counted("b")
      const c = counted("c")
      yield* cache.through("a", () => a.read).pipe(at(1))
      yield* cache.through("b", () => b.read).pipe(at(1))
      // "a" is used again, so "b" is the least recently used when "c" arrives.
      yield* cache.through("a", () => a.read).pipe(at(1))
      yield* cache.through("c", () => c.read).pipe(at(1))
      yield* cache.through("a", () => a.read).pipe(at(1))
      yield* cache.through("b", () => b.read).pipe(at(1))
      expect([a.counter.reads, b.counter.reads, c.counter.reads]).toEqual([1, 2, 1])
    }))

  it.effect("a failed read is not cached", () =>
    Effect.gen(function*() {
      const cache = makeRevisionCache<string>(2)
      const failed = yield* Effect.flip(cache.through("k", () => Effect.fail("boom")).pipe(at(1)))
      expect(failed).toBe("boom")
      expect(yield* cache.through("k", () => Effect.succeed("v")).pipe(at(1))).toBe("v")
    }))

  it.effect("with a budget, keeps at most its weight, dropping the least recently used, and never a value over it", () =>
    Effect.gen(function*() {
      const cache = makeRevisionCache<string>(10, { weightOf: (value) => value.length, max: 5 })
      const reads = { count: 0 }
      const read = (value: string) => () => Effect.sync(() => (reads.count++, value))
      yield* cache.at(1, "a", read("aa"))
      yield* cache.at(1, "b", read("bb"))
      yield* cache.at(1, "a", read("aa"))
      // 2 + 2 + 3 > 5: "b", the least recently used, makes room for "c".
      yield* cache.at(1, "c", read("ccc"))
      expect(reads.count).toBe(3)
      yield* cache.at(1, "a", read("aa"))
      yield* cache.at(1, "c", read("ccc"))
      expect(reads.count).toBe(3)
      yield* cache.at(1, "b", read("bb"))
      expect(reads.count).toBe(4)
      // Heavier than the whole budget: answered, never kept, and nothing else dropped for it.
      expect(yield* cache.at(1, "huge", read("hhhhhh"))).toBe("hhhhhh")
      yield* cache.at(1, "huge", read("hhhhhh"))
      expect(reads.count).toBe(6)
      yield* cache.at(1, "b", read("bb"))
      expect(reads.count).toBe(6)
    }))
})
