// Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) into self-time
// rankings, by function and by package, over a window of the profiled run.
// V8 samples the main thread on a wall clock: time the thread spent
// descheduled is charged to whatever it was running (often a syscall such as
// `writev`), so compare shares with the process's CPU time in mind.
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import { fixed, formatTable, integer } from "./report.ts"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: CallFrame }>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface SelfTime {
  readonly name: string
  readonly location: string
  readonly selfMs: number
  /** Share of the sampled time that was not idle. */
  readonly percent: number
}

const displayPath = (url: string, root: string) => {
  if (url === "") return ""
  const path = url.startsWith("file://") ? fileURLToPath(url) : url
  return path.startsWith(root) ? relative(root, path) : path
}

/** The package a frame belongs to: `node_modules/<pkg>`, the service's own code, Node's internals or V8. */
const packageOf = (path: string) => {
  if (path === "") return "native (V8, GC, syscalls)"
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
  if (inModules !== null) return inModules[1]
  if (path.startsWith("node:")) return "node internals"
  if (path.startsWith("dist/") || path.startsWith("src/")) return "platform-api"
  return path
}

export const readProfile = (file: string) => JSON.parse(readFileSync(file, "utf8")) as CpuProfile

/** A span of CLOCK_MONOTONIC time in microseconds (`process.hrtime`'s clock, which V8's profiles use), `from` inclusive. */
export interface Window {
  readonly fromMicros: number
  readonly toMicros: number
}

/**
 * Self time per function (frames of one function at one source position are
 * merged, whichever stack they appeared in) and per package, most first,
 * over the samples taken within `window`. Sample i lasts until sample i+1, as
 * DevTools counts it.
 */
export const selfTimes = (profile: CpuProfile, root: string, window: Window) => {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const byFunction = new Map<string, { name: string; location: string; micros: number }>()
  const byPackage = new Map<string, number>()
  let sampled = 0
  let timestamp = profile.startTime
  for (let index = 0; index < profile.samples.length; index++) {
    timestamp += profile.timeDeltas[index] ?? 0
    if (timestamp < window.fromMicros || timestamp >= window.toMicros) continue
    const frame = frames.get(profile.samples[index])
    if (frame === undefined || frame.functionName === "(idle)") continue
    const micros = profile.timeDeltas[index + 1] ?? 0
    sampled += micros
    const path = displayPath(frame.url, root)
    const location = path === "" ? "" : `${path}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`
    const key = `${frame.functionName}\u0000${location}`
    const entry = byFunction.get(key) ?? { name: frame.functionName || "(anonymous)", location, micros: 0 }
    entry.micros += micros
    byFunction.set(key, entry)
    const owner = packageOf(path)
    byPackage.set(owner, (byPackage.get(owner) ?? 0) + micros)
  }
  const share = (micros: number) => (sampled === 0 ? 0 : (100 * micros) / sampled)
  return {
    busyMs: sampled / 1000,
    wallMs: (window.toMicros - window.fromMicros) / 1000,
    functions: [...byFunction.values()]
      .sort((a, b) => b.micros - a.micros)
      .map((entry): SelfTime => ({ name: entry.name, location: entry.location, selfMs: entry.micros / 1000, percent: share(entry.micros) })),
    packages: [...byPackage.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]): SelfTime => ({ name, location: "", selfMs: micros / 1000, percent: share(micros) }))
  }
}

/** Now on the clock V8's profiles use (CLOCK_MONOTONIC), in microseconds: the ends of a `Window`. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)

const profileTopCount = 15

/** Prints the top functions and packages by self time in `window` of the profile in `file`; answers them. */
export const printSelfTimes = (title: string, file: string, root: string, window: Window) => {
  const profile = selfTimes(readProfile(file), root, window)
  console.log(`\nCPU profile of ${title} (${file})`)
  console.log(`main thread busy ${integer(profile.busyMs)} ms of ${integer(profile.wallMs)} ms; top ${profileTopCount} functions by self time:`)
  console.log(formatTable(
    ["self ms", "share", "function", "location"],
    profile.functions.slice(0, profileTopCount).map((entry) => [integer(entry.selfMs), `${fixed(entry.percent)}%`, entry.name, entry.location])
  ))
  console.log("by package:")
  console.log(formatTable(
    ["self ms", "share", "package"],
    profile.packages.slice(0, 10).map((entry) => [integer(entry.selfMs), `${fixed(entry.percent)}%`, entry.name])
  ))
  return { ...profile, functions: profile.functions.slice(0, 50) }
}
