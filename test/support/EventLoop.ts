import { Effect } from "effect"

/** This thread's own CPU time so far, in milliseconds. */
const cpuMs = () => {
  const { user, system } = process.threadCpuUsage()
  return (user + system) / 1_000
}

/**
 * Runs `effect` and answers its result with the longest the event loop was
 * held between two of its turns meanwhile, as the thread's own CPU time: what
 * a request waiting for a turn waits for, apart from the time the operating
 * system gives other processes (so other load on the machine does not count).
 */
export const longestTurn = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let longestMs = 0
    let last = cpuMs()
    let running = true
    const tick = () => {
      if (!running) return
      const now = cpuMs()
      longestMs = Math.max(longestMs, now - last)
      last = now
      setImmediate(tick)
    }
    setImmediate(tick)
    const result = yield* Effect.ensuring(effect, Effect.sync(() => void (running = false)))
    return { result, longestMs }
  })
