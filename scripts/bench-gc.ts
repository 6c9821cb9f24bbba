/**
 * `npm run bench:gc`: the service's garbage collection under a steady load,
 * with V8's defaults and, in the same run, with the V8 flags in
 * `BENCH_NODE_FLAGS` if set (e.g. `--no-allocation-site-pretenuring`): the
 * way to show what a flag buys before the start script passes it.
 *
 * For each setting, ours on in-memory PGlite (`--trace-gc-nvp`) behind a
 * stub upstream; for each request kind (`/health`, `GET /api/v0/me`, a chat
 * completion, a streamed one) autocannon offers `BENCH_RATE` (500) req/s over
 * 16 connections for `BENCH_SECONDS` (10) s after a 2 s warm-up. Reported:
 * the young-generation collections (scavenges) during the run, their mean
 * and longest pause (the event loop stands still meanwhile), what outlived
 * one scavenge per request (copied within the young generation), what they
 * promoted to the old generation per request (objects that outlived two of
 * them), the share of one scavenge's survivors the next one promoted
 * (V8's `promotion_rate`: near 100 % when what survives once is still held
 * at the next scavenge), and
 * the server's CPU time per request.
 */
import { startStubUpstream } from "../test/support/StubUpstream.ts"
import { runScript } from "./bench/children.ts"
import { runLoad } from "./bench/load.ts"
import { startInMemoryServer } from "./bench/in-memory-server.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { tenantHeaders } from "./bench/servers.ts"

const seconds = numberFromEnv("BENCH_SECONDS", 10)
const rate = numberFromEnv("BENCH_RATE", 500)
const connections = 16

interface Scavenge {
  readonly pauseMs: number
  readonly promotedBytes: number
  /** Bytes that outlived this scavenge and stay young (copied, not promoted). */
  readonly survivedBytes: number
  /** Percent of the previous scavenge's survivors that this one promoted. */
  readonly promotionRate: number
}

/** The scavenges among `--trace-gc-nvp` lines (`gc=s`): each one's pause, promoted and surviving bytes. */
const scavengesIn = (trace: string): Array<Scavenge> =>
  trace.split("\n").filter((line) => line.includes(" gc=s ")).map((line) => ({
    pauseMs: Number(/ pause=([\d.]+)/.exec(line)?.[1]),
    promotedBytes: Number(/ promoted=(\d+)/.exec(line)?.[1]),
    survivedBytes: Number(/ new_space_survived=(\d+)/.exec(line)?.[1]),
    promotionRate: Number(/ promotion_rate=([\d.]+)%/.exec(line)?.[1])
  }))

const sumOf = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0)

const meanOf = (values: ReadonlyArray<number>) => (values.length === 0 ? undefined : sumOf(values) / values.length)

const main = async () => {
  const startedAt = new Date()
  const stub = await startStubUpstream({ record: false })
  const messages = [{ role: "user", content: "Say hello" }]
  const kinds = [
    { name: "GET /health", path: "/health" },
    { name: "GET /api/v0/me", path: "/api/v0/me" },
    { name: "chat completion", path: "/api/v0/chat/completions", body: { model: "bench", messages } },
    { name: "chat completion, streamed", path: "/api/v0/chat/completions", body: { model: "bench", messages, stream: true } }
  ]
  const measured = []
  const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter((flag) => flag !== "") ?? []
  const settings = [{ name: "V8 defaults", flags: [] as Array<string> }, ...(flags.length === 0 ? [] : [{ name: flags.join(" "), flags }])]
  for (const setting of settings) {
    const server = await startInMemoryServer(stub.url, { nodeArgs: [...setting.flags, "--trace-gc-nvp"] })
    const headers = await tenantHeaders(server, { name: "Bench", creditLimit: 1_000_000_000_000 })
    for (const kind of kinds) {
      const load = { url: `${server.baseUrl}${kind.path}`, headers, body: kind.body, connections, ratePerSecond: rate, serverPid: server.child.pid }
      await runLoad({ ...load, durationSeconds: 2 })
      const traceFrom = server.child.stdout().length
      const result = await runLoad({ ...load, durationSeconds: seconds })
      const scavenges = scavengesIn(server.child.stdout().slice(traceFrom))
      const pauses = scavenges.map((scavenge) => scavenge.pauseMs)
      const kbPerRequest = (bytes: (scavenge: Scavenge) => number) => sumOf(scavenges.map(bytes)) / 1024 / Math.max(1, result.requests)
      measured.push({
        setting: setting.name,
        kind: kind.name,
        requests: result.requests,
        failed: result.non2xx + result.errors,
        p99Ms: result.p99Ms,
        cpuMicrosPerRequest: result.serverCpuMicrosPerRequest,
        scavenges: scavenges.length,
        meanPauseMs: meanOf(pauses) ?? 0,
        maxPauseMs: Math.max(0, ...pauses),
        survivedKbPerRequest: kbPerRequest((scavenge) => scavenge.survivedBytes),
        promotedKbPerRequest: kbPerRequest((scavenge) => scavenge.promotedBytes),
        // The first scavenge's rate is about survivors from before the run (its warm-up or the previous request kind).
        meanPromotionRate: meanOf(scavenges.slice(1).map((scavenge) => scavenge.promotionRate))
      })
    }
    await server.child.stop()
  }
  await stub.close()
  console.log(`\nYoung-generation collections at ${rate} req/s offered (${seconds} s per run, in-memory PGlite; node ${process.version})`)
  console.log(formatTable(
    ["request", "V8 settings", "requests", "failed", "p99 ms", "CPU µs/req", "scavenges", "mean pause ms", "max pause ms", "survived KB/req", "promoted KB/req", "promoted of survivors %"],
    measured.map((row) => [
      row.kind,
      row.setting,
      integer(row.requests),
      integer(row.failed),
      integer(row.p99Ms),
      row.cpuMicrosPerRequest === undefined ? "-" : integer(row.cpuMicrosPerRequest),
      integer(row.scavenges),
      fixed(row.meanPauseMs),
      fixed(row.maxPauseMs),
      fixed(row.survivedKbPerRequest),
      fixed(row.promotedKbPerRequest),
      row.meanPromotionRate === undefined ? "-" : integer(row.meanPromotionRate)
    ])
  ))
  console.log(`Results: ${writeResults("gc", startedAt, { seconds, rate, connections, node: process.version, measured })}`)
}

runScript(main)
