import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { setTimeout } from "node:timers/promises"
import { threadId } from "node:worker_threads"
import { idleThreadMs, makeWorkerPool, type WorkerPoolSettings } from "../../src/platform/WorkerPool.ts"
import type { PoolTestJob } from "../support/PoolTestWorker.ts"

const settings: WorkerPoolSettings = {
  file: new URL("../support/PoolTestWorker.ts", import.meta.url),
  workers: 1,
  memoryMb: 64,
  timeoutMs: 10_000
}

const poolOf = (overrides: Partial<WorkerPoolSettings> = {}) => makeWorkerPool<PoolTestJob, unknown>({ ...settings, ...overrides })

const reasonOf = (run: (job: PoolTestJob) => Effect.Effect<unknown, { readonly reason: string }>, job: PoolTestJob) =>
  Effect.map(Effect.flip(run(job)), (failed) => failed.reason)

// Real threads answer on their own time; the pool's timers (time limit, idle retirement) run on the TestClock.
describe("the worker pool", { timeout: 60_000 }, () => {
  it.effect("runs a job on another thread and keeps that thread warm for the next job", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      const first = yield* run({ kind: "threadId" })
      expect(first).not.toBe(threadId)
      expect(yield* run({ kind: "threadId" })).toBe(first)
    })))

  it.effect("runs at most `workers` jobs at once: with one thread, concurrent jobs take turns on it", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      const threads = yield* Effect.forEach([1, 2, 3, 4], () => run({ kind: "threadId" }), { concurrency: "unbounded" })
      expect(new Set(threads).size).toBe(1)
    })))

  it.effect("fails a job past its time limit with `timeout` and replaces the thread", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf({ timeoutMs: 5_000 })
      const before = yield* run({ kind: "threadId" })
      const spinning = yield* Effect.forkChild(reasonOf(run, { kind: "spin" }))
      yield* TestClock.adjust(5_000)
      expect(yield* Fiber.join(spinning)).toBe("timeout")
      expect(yield* run({ kind: "threadId" })).not.toBe(before)
    })))

  it.effect("fails with `out-of-memory` when a job passes the heap limit, and the next job still runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      expect(yield* reasonOf(run, { kind: "allocate" })).toBe("out-of-memory")
      expect(yield* run({ kind: "threadId" })).toEqual(expect.any(Number))
    })))

  it.effect("fails with `crashed` when the thread exits, the job dies or its reply cannot be sent; the pool keeps serving", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      expect(yield* reasonOf(run, { kind: "exit" })).toBe("crashed")
      expect(yield* reasonOf(run, { kind: "die" })).toBe("crashed")
      expect(yield* reasonOf(run, { kind: "uncloneable" })).toBe("crashed")
      expect(yield* run({ kind: "threadId" })).toEqual(expect.any(Number))
    })))

  it.effect("terminates the thread of an abandoned job (the caller was interrupted)", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      const before = yield* run({ kind: "threadId" })
      const spinning = yield* Effect.forkChild(run({ kind: "spin" }))
      // Real time for the job to reach its thread (the TestClock would not move).
      yield* Effect.promise(() => setTimeout(100))
      yield* Fiber.interrupt(spinning)
      expect(yield* run({ kind: "threadId" })).not.toBe(before)
    })))

  it.effect("terminates a thread idle for `idleThreadMs`, not before", () =>
    Effect.scoped(Effect.gen(function*() {
      const run = yield* poolOf()
      const first = yield* run({ kind: "threadId" })
      yield* TestClock.adjust(idleThreadMs - 1)
      expect(yield* run({ kind: "threadId" })).toBe(first)
      yield* TestClock.adjust(idleThreadMs)
      expect(yield* run({ kind: "threadId" })).not.toBe(first)
    })))
})
