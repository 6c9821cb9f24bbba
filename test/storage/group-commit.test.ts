import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { groupCommit } from "../../src/storage/GroupCommit.ts"

describe("group commit", () => {
  it.effect("writes the first item at once, the items that arrive meanwhile together next, each caller getting its own answer", () =>
    Effect.gen(function*() {
      const groups: Array<ReadonlyArray<number>> = []
      const firstWriting = yield* Deferred.make<void>()
      const releaseFirst = yield* Deferred.make<void>()
      const submit = groupCommit((items: ReadonlyArray<number>) =>
        Effect.gen(function*() {
          groups.push(items)
          if (groups.length === 1) {
            yield* Deferred.succeed(firstWriting, undefined)
            yield* Deferred.await(releaseFirst)
          }
          return items.map((item) => item * 10)
        }), 3)
      const first = yield* Effect.forkChild(submit(1))
      yield* Deferred.await(firstWriting)
      // Four arrive while the first write runs: the next group takes three (the limit), the one after the last.
      const later = yield* Effect.forkChild(Effect.all([2, 3, 4, 5].map(submit), { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      expect(groups).toEqual([[1]])
      yield* Deferred.succeed(releaseFirst, undefined)
      expect(yield* Fiber.join(first)).toBe(10)
      expect(yield* Fiber.join(later)).toEqual([20, 30, 40, 50])
      expect(groups).toEqual([[1], [2, 3, 4], [5]])
    }))

  it.effect("a failed write fails every item of its group, and the next group is written", () =>
    Effect.gen(function*() {
      let calls = 0
      const submit = groupCommit((items: ReadonlyArray<string>) =>
        Effect.suspend(() => (++calls === 1 ? Effect.die(new Error("database gone")) : Effect.succeed(items.map((item) => item.length)))), 10)
      const failed = yield* Effect.exit(submit("abc"))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* submit("abcd")).toBe(4)
    }))
})
