import { Duration, Effect, Layer } from "effect"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { AppConfig } from "./AppConfig.ts"

/** How often the process looks whether it is idle (a look costs a few microseconds). */
const checkEvery = Duration.seconds(2)
/** Idle: less CPU than this share of the last check's interval. */
const idleCpuShare = 0.02
/** Worth a collection: V8's heap grew by this much (bytes) since the last one. */
const grownBytes = 16 * 1024 * 1024
/**
 * How long the process must have been idle before a collection. A
 * collection undoes what V8 adapted to the load (its young generation, its
 * heap limits), and the next burst pays for that: ~30 % more CPU per model
 * call for 5–10 s, which a process serving traffic with short pauses would
 * pay after every pause (docs/benchmarks.md, "idle compaction only after 30 s idle").
 */
const idleBefore = Duration.seconds(30)

type GarbageCollection = (options: {
  readonly type: "major"
  readonly execution: "sync"
  readonly flavor: "last-resort"
}) => void

/**
 * V8's full, compacting collection, which Node only offers behind
 * `--expose-gc`: set at run time, the flag exposes `gc` to contexts made
 * after it. The "last resort" kind also hands the freed pages back to the
 * operating system at once (a plain one leaves them pooled for seconds).
 */
const collectGarbage = () => {
  setFlagsFromString("--expose-gc")
  const gc = runInNewContext("gc") as GarbageCollection
  return () => gc({ type: "major", execution: "sync", flavor: "last-resort" })
}

const cpuMicros = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

/**
 * Gives memory back once a busy spell is over. Start-up (loading the
 * modules, migrating, building the OpenAPI document) and every burst of
 * requests grow V8's young generation to its maximum, ~80 MB that V8 keeps
 * while the process idles. Every 2 s the process looks whether it used under
 * 2 % of a CPU since the last look; when it has been idle that way for
 * `idleBefore` and V8's heap grew by 16 MB since the last collection, one
 * full collection runs: it pauses the idle process for ~0.1–0.2 s and
 * shrinks the heap to what is alive. `IDLE_COMPACTION=off` turns it off.
 * The server runs with V8's own memory reducer off (`npm start`,
 * docs/operations.md), so this is what gives memory back.
 */
export const IdleCompactionLive = Layer.effectDiscard(Effect.gen(function*() {
  if (!(yield* AppConfig).idleCompaction) return
  const gc = collectGarbage()
  let lastLook = cpuMicros()
  let heapAfterCollection = 0
  /** Consecutive idle looks. */
  let idleLooks = 0
  const idleLooksBefore = Duration.toMillis(idleBefore) / Duration.toMillis(checkEvery)
  const look = Effect.sync(() => {
    const now = cpuMicros()
    const idle = now - lastLook < idleCpuShare * Duration.toMillis(checkEvery) * 1000
    lastLook = now
    idleLooks = idle ? idleLooks + 1 : 0
    if (idleLooks >= idleLooksBefore && getHeapStatistics().total_heap_size - heapAfterCollection >= grownBytes) {
      gc()
      heapAfterCollection = getHeapStatistics().total_heap_size
      lastLook = cpuMicros()
    }
  })
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(checkEvery), look)))
}))
