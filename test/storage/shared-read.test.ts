import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { sharedRead, sharedReads } from "../../src/storage/SharedRead.ts"

/** A read whose every call waits until the test answers it: `answer(n)` completes the n-th read (from 1). */
const gatedRead = Effect.gen(function*() {
  const gates: Array<Deferred.Deferred<number>> = []
  const read = Effect.suspend(() => {
    const gate = Deferred.makeUnsafe<number>()
    gates.push(gate)
    return Deferred.await(gate)
  })
  return {
    shared: sharedRead(read, Effect.runFork),
    reads: () => gates.length,
    answer: (n: number, value: number) => Deferred.succeed(gates[n - 1]!, value)
  }
})

describe("sharedRead", () => {
  it.effect("a caller alone gets its own read", () =>
    Effect.gen(function*() {
      const { answer, reads, shared } = yield* gatedRead
      const first = yield* Effect.forkChild(shared)
      yield* Effect.yieldNow
      yield* answer(1, 7)
      expect(yield* Fiber.join(first)).toBe(7)
      const second = yield* Effect.forkChild(shared)
      yield* Effect.yieldNow
      expect(reads()).toBe(2)
      yield* answer(2, 8)
      expect(yield* Fiber.join(second)).toBe(8)
    }))

  it.effect("callers who ask while a read is under way never get its result: they share the next read, sent once it answered", () =>
    Effect.gen(function*() {
      const { answer, reads, shared } = yield* gatedRead
      const early = yield* Effect.forkChild(shared)
      yield* Effect.yieldNow
      const late = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(shared))
      yield* Effect.yieldNow
      expect(reads()).toBe(1)
      yield* answer(1, 1)
      expect(yield* Fiber.join(early)).toBe(1)
      yield* Effect.yieldNow
      expect(reads()).toBe(2)
      expect(late.every((fiber) => fiber.pollUnsafe() === undefined)).toBe(true)
      yield* answer(2, 2)
      expect(yield* Effect.forEach(late, Fiber.join)).toEqual([2, 2, 2])
      expect(reads()).toBe(2)
    }))

  it.effect("an interrupted caller does not stop the read the others wait for", () =>
    Effect.gen(function*() {
      const { answer, shared } = yield* gatedRead
      yield* Effect.forkChild(shared)
      yield* Effect.yieldNow
      const [leaving, staying] = yield* Effect.forEach([1, 2], () => Effect.forkChild(shared))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(leaving!)
      yield* answer(1, 1)
      yield* Effect.yieldNow
      yield* answer(2, 2)
      expect(yield* Fiber.join(staying!)).toBe(2)
    }))

  it.effect("a failed read fails the callers who shared it; the next caller reads again", () =>
    Effect.gen(function*() {
      let calls = 0
      const shared = sharedRead(
        Effect.suspend(() => (++calls === 1 ? Effect.die(new Error("connection lost")) : Effect.succeed(calls))),
        Effect.runFork
      )
      expect((yield* Effect.exit(shared))._tag).toBe("Failure")
      expect(yield* shared).toBe(2)
    }))

  it.effect("a read is given the keys of every caller it serves, and only theirs", () =>
    Effect.gen(function*() {
      const asked: Array<ReadonlyArray<string>> = []
      const gates: Array<Deferred.Deferred<void>> = []
      const shared = sharedReads((keys: ReadonlySet<string>) =>
        Effect.suspend(() => {
          asked.push([...keys].sort())
          const gate = Deferred.makeUnsafe<void>()
          gates.push(gate)
          return Effect.as(Deferred.await(gate), new Map([...keys].map((key) => [key, key.toUpperCase()])))
        }), Effect.runFork)
      const first = yield* Effect.forkChild(shared(["a"]))
      yield* Effect.yieldNow
      const late = yield* Effect.forEach([["b", "c"], ["c", "d"]], (keys) => Effect.forkChild(shared(keys)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[0]!, undefined)
      expect([...(yield* Fiber.join(first)).keys()]).toEqual(["a"])
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[1]!, undefined)
      const [bc, cd] = yield* Effect.forEach(late, Fiber.join)
      expect(asked).toEqual([["a"], ["b", "c", "d"]])
      expect([...bc!.keys()].sort()).toEqual(["b", "c", "d"])
      expect(cd).toBe(bc)
    }))
})
