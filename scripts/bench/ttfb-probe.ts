/**
 * The time-to-first-byte probe of `bench:gateway`, run as its own process:
 * `node scripts/bench/ttfb-probe.ts <target JSON> <per second> <seconds>`
 * sends for one unmeasured second, then for `<seconds>`, and prints
 * `{p50, p99, requests, failures, failedBy}` of the measured calls in milliseconds.
 *
 * It imports nothing but Node's own modules. A probe that loads the
 * benchmark's imports (Effect, the stub) starts with a heap that V8 is still
 * collecting during the measured seconds: its own pauses (up to 26 ms) then
 * delayed the timestamps it took, and its parallel collector threads took
 * the machine's cores from the gateway being measured. The unmeasured second
 * takes the probe's own first full collection, which comes as its heap
 * first grows, out of the measured seconds.
 */
import { Agent, request } from "node:http"
import { ascending, percentile } from "./stats.ts"

export interface Target {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

export interface Latency {
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly failures: number
  /** What failed, by status (`HTTP 500`) or error code (`ECONNRESET`), for any call, warm-up included. */
  readonly failedBy: Record<string, number>
}

const warmUpMs = 1000

/**
 * Sends `target` for `duration` s after the warm-up: back to back on one connection (`perSecond` 0), or
 * open-loop at `perSecond`; times the first byte of the calls started after the warm-up.
 */
const runProbe = async (target: Target, perSecond: number, duration: number): Promise<Latency> => {
  // A socket idle for 4 s is closed here, before the servers' 5 s keep-alive timeout. Node 24's agent would
  // otherwise reuse one the server is closing at that moment: an ECONNRESET of the client's own making.
  const agent = new Agent({ keepAlive: true, timeout: 4000, maxSockets: perSecond === 0 ? 1 : 256 })
  const url = new URL(target.url)
  const headers = { ...target.headers, "content-type": "application/json", "content-length": Buffer.byteLength(target.body) }
  const samples: Array<number> = []
  const failedBy: Record<string, number> = {}
  const fail = (reason: string) => {
    failedBy[reason] = (failedBy[reason] ?? 0) + 1
  }
  const measuredFrom = performance.now() + warmUpMs
  const deadline = measuredFrom + duration * 1000
  const once = () =>
    new Promise<void>((done) => {
      const started = performance.now()
      const measured = started >= measuredFrom
      let first = true
      const failed = (error: NodeJS.ErrnoException) => {
        fail(error.code ?? error.message)
        done()
      }
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers }, (res) => {
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}`)
        res.on("data", () => {
          if (first && measured) samples.push(performance.now() - started)
          first = false
        })
        res.on("end", done)
        res.on("error", failed)
      })
      req.on("error", failed)
      req.end(target.body)
    })
  if (perSecond === 0) {
    while (performance.now() < deadline) await once()
  } else {
    const start = performance.now()
    let sent = 0
    let inFlight = 0
    let stopped = false
    await new Promise<void>((allDone) => {
      const finished = () => {
        inFlight--
        if (stopped && inFlight === 0) allDone()
      }
      const timer = setInterval(() => {
        const now = performance.now()
        const due = Math.floor(((now - start) / 1000) * perSecond)
        while (sent < due) {
          inFlight++
          sent++
          void once().then(finished)
        }
        if (now >= deadline) {
          clearInterval(timer)
          stopped = true
          if (inFlight === 0) allDone()
        }
      }, 1)
    })
  }
  agent.destroy()
  const sorted = ascending(samples)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), requests: samples.length, failures: Object.values(failedBy).reduce((sum, count) => sum + count, 0), failedBy }
}

if (import.meta.main) {
  const [target, perSecond, duration] = process.argv.slice(2)
  process.stdout.write(JSON.stringify(await runProbe(JSON.parse(target), Number(perSecond), Number(duration))))
}
