import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref, Stream } from "effect"
import { mapChunks, prepend, started } from "../../src/platform/Streams.ts"

/** The chunks a stream emits, as arrays. */
const chunksOf = <A, E>(stream: Stream.Stream<A, E>) =>
  Effect.gen(function*() {
    const chunks: Array<ReadonlyArray<A>> = []
    yield* Stream.runForEachArray(stream, (chunk) => Effect.sync(() => void chunks.push([...chunk])))
    return chunks
  })

describe("mapChunks", () => {
  it.effect("emits one chunk per chunk pulled, skips empty ones and ends with what `end` adds", () =>
    Effect.gen(function*() {
      const mapped = mapChunks(Stream.fromArrays(["a b", "c"], ["-"], ["d"]), () => {
        let seen = 0
        return {
          chunk: (texts) =>
            Effect.sync(() => {
              seen += texts.length
              return texts.flatMap((text) => text.split(" ").filter((word) => word !== "-"))
            }),
          end: Effect.sync(() => [`${seen} texts`])
        }
      })
      expect(yield* chunksOf(mapped)).toEqual([["a", "b", "c"], ["d"], ["4 texts"]])
      // Each run starts its own state.
      expect(yield* chunksOf(mapped)).toEqual([["a", "b", "c"], ["d"], ["4 texts"]])
    }))

  it.effect("fails the stream with the mapper's failure", () =>
    Effect.gen(function*() {
      const mapped = mapChunks(Stream.fromArrays([1], [2], [3]), () => ({
        chunk: ([n]) => (n === 2 ? Effect.fail("two" as const) : Effect.succeed([n]))
      }))
      expect(yield* Effect.flip(chunksOf(mapped))).toBe("two")
    }))
})

describe("started", () => {
  it.effect("runs the stream up to its first chunk and answers all of it", () =>
    Effect.gen(function*() {
      const pulls = yield* Ref.make(0)
      const counted = Stream.fromArrays([1, 2], [3]).pipe(Stream.tap(() => Ref.update(pulls, (n) => n + 1)))
      const stream = yield* started(counted)
      expect(yield* Ref.get(pulls)).toBe(1)
      expect(yield* Stream.runCollect(stream)).toEqual([1, 2, 3])
    }).pipe(Effect.scoped))

  it.effect("fails when the stream fails before its first chunk, and answers an empty stream as empty", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(started(Stream.fail("refused")))).toBe("refused")
      expect(yield* Stream.runCollect(yield* started(Stream.empty))).toEqual([])
    }).pipe(Effect.scoped))
})

describe("prepend", () => {
  it.effect("emits its chunk before the stream's, on every run", () =>
    Effect.gen(function*() {
      let pulled = 0
      const source = Stream.mapArray(Stream.fromArrays(["b", "c"], ["d"]), (chunk) => {
        pulled += 1
        return chunk
      })
      const stream = prepend(source, ["a"])
      expect(yield* chunksOf(stream)).toEqual([["a"], ["b", "c"], ["d"]])
      expect(yield* chunksOf(stream)).toEqual([["a"], ["b", "c"], ["d"]])
      expect(pulled).toBe(4)
    }))

  it.effect("emits its chunk before an empty stream ends, and before a failing one fails", () =>
    Effect.gen(function*() {
      expect(yield* chunksOf(prepend(Stream.empty, ["a"]))).toEqual([["a"]])
      const seen: Array<string> = []
      const failed = yield* Stream.runForEach(prepend(Stream.fail("broke"), ["a"]), (item) => Effect.sync(() => void seen.push(item))).pipe(Effect.flip)
      expect(seen).toEqual(["a"])
      expect(failed).toBe("broke")
    }))
})
