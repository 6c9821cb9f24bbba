/**
 * `npm run bench:pause`: model calls right after traffic paused, with the
 * service's V8 options (`serverNodeOptions`: V8's memory reducer off) and,
 * in the same run, with V8's memory reducer on.
 *
 * Each round starts the built server on the embedded database behind a stub
 * upstream, offers `BENCH_RATE` (500) chat completions a second over 16
 * connections for 4 s, leaves it idle for `BENCH_PAUSE_SECONDS` (10), then
 * offers the same load for `BENCH_SECONDS` (10) and reports its latency.
 * The two settings alternate for `BENCH_ROUNDS` (3) rounds, so that a
 * machine getting faster or slower shows in both.
 */
import { startStubUpstream } from "../test/support/StubUpstream.ts"
import { runScript } from "./bench/children.ts"
import { runLoad } from "./bench/load.ts"
import { builtServerBehindStub } from "./bench/in-memory-server.ts"
import { numberFromEnv } from "./bench/env.ts"
import { formatTable, integer, writeResults } from "./bench/report.ts"
import { ensureBuilt, serverNodeOptions, startPlatform, tenantHeaders } from "./bench/servers.ts"

const rate = numberFromEnv("BENCH_RATE", 500)
const pauseSeconds = numberFromEnv("BENCH_PAUSE_SECONDS", 10)
const seconds = numberFromEnv("BENCH_SECONDS", 10)
const rounds = numberFromEnv("BENCH_ROUNDS", 3)
const connections = 16

const settings = [
  { name: "the service's (memory reducer off)", serverNodeOptions },
  { name: "V8's memory reducer on", serverNodeOptions: [] }
]

const main = async () => {
  ensureBuilt()
  const startedAt = new Date()
  const stub = await startStubUpstream({ record: false })
  const measured = []
  for (let round = 1; round <= rounds; round++) {
    for (const setting of settings) {
      const server = await startPlatform({
        serverNodeOptions: setting.serverNodeOptions,
        env: builtServerBehindStub(stub.url)
      })
      const headers = await tenantHeaders(server, { name: "Bench", creditLimit: 1_000_000_000_000 })
      const load = {
        url: `${server.baseUrl}/api/v0/chat/completions`,
        headers,
        body: { model: "bench", messages: [{ role: "user", content: "Say hello" }] },
        connections,
        ratePerSecond: rate,
        serverPid: server.child.pid!
      }
      await runLoad({ ...load, durationSeconds: 4 })
      await new Promise((done) => setTimeout(done, pauseSeconds * 1000))
      const result = await runLoad({ ...load, durationSeconds: seconds })
      await server.child.stop()
      measured.push({ setting: setting.name, round, ...result })
      console.log(`round ${round}, ${setting.name}: p99 ${result.p99Ms} ms`)
    }
  }
  await stub.close()
  console.log(`\nChat completions at ${rate}/s offered, ${seconds} s right after ${pauseSeconds} s idle (built server, PGlite; node ${process.version})`)
  console.log(formatTable(
    ["V8 settings", "round", "requests", "failed", "p50 ms", "p99 ms", "CPU µs/req"],
    measured.map((row) => [
      row.setting,
      String(row.round),
      integer(row.requests),
      integer(row.non2xx + row.errors + row.timeouts),
      String(row.p50Ms),
      String(row.p99Ms),
      row.serverCpuMicrosPerRequest === undefined ? "-" : integer(row.serverCpuMicrosPerRequest)
    ])
  ))
  console.log(`Results: ${writeResults("pause", startedAt, { rate, pauseSeconds, seconds, rounds, node: process.version, measured })}`)
}

runScript(main)
