// The load generator: autocannon in a child process, never in the process
// under test nor in the script's own event loop.
import { createRequire } from "node:module"
import { monotonicMicros, type Window } from "./cpu-profile.ts"
import { spawnChild } from "./children.ts"
import { cpuSecondsOf } from "./servers.ts"

const autocannon = createRequire(import.meta.url).resolve("autocannon")


export interface LoadOptions {
  readonly url: string
  readonly headers: Record<string, string>
  /** A JSON body: the load is POSTed. */
  readonly body?: unknown
  readonly connections: number
  readonly durationSeconds: number
  /** Offers this many requests a second in all, rather than as many as the connections manage. */
  readonly ratePerSecond?: number
  /** The server's process, whose CPU use over the run is reported. */
  readonly serverPid: number
}

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly requests: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly statusCodes: Record<string, number>
  /** Share of one CPU core the server used during the run (100 = one core busy throughout). */
  readonly serverCpuPercent: number | undefined
  /** Server CPU time per answered request, in microseconds. */
  readonly serverCpuMicrosPerRequest: number | undefined
  /** When the load generator started and ended: CLOCK_MONOTONIC microseconds, the clock of V8's CPU profiles. */
  readonly window: Window
}

interface AutocannonJson {
  /** Seconds the load actually ran. */
  readonly duration: number
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly statusCodeStats?: Record<string, { readonly count: number }>
}

export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const args = [
    autocannon,
    "--json",
    "--connections", String(options.connections),
    "--duration", String(options.durationSeconds),
    ...(options.ratePerSecond === undefined ? [] : ["--overallRate", String(options.ratePerSecond)]),
    ...Object.entries(options.headers).flatMap(([name, value]) => ["--headers", `${name}=${value}`]),
    ...(options.body === undefined
      ? []
      : ["--method", "POST", "--headers", "content-type=application/json", "--body", JSON.stringify(options.body)]),
    options.url
  ]
  const cpuBefore = cpuSecondsOf(options.serverPid)
  const fromMicros = monotonicMicros()
  const child = spawnChild(process.execPath, args)
  const exit = await child.exited
  const toMicros = monotonicMicros()
  const cpuAfter = cpuSecondsOf(options.serverPid)
  if (exit !== 0) throw new Error(`autocannon exited with ${exit}: ${child.stderr()}`)
  const result = JSON.parse(child.stdout()) as AutocannonJson
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count])),
    serverCpuPercent: cpuSeconds === undefined ? undefined : (100 * cpuSeconds) / result.duration,
    serverCpuMicrosPerRequest: cpuSeconds === undefined || result.requests.total === 0
      ? undefined
      : (1e6 * cpuSeconds) / result.requests.total,
    window: { fromMicros, toMicros }
  }
}
