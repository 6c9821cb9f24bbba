/**
 * The gateway's added latency over a direct upstream call, ours beside
 * Portkey's open-source gateway, in one run against the same stub.
 *
 * Processes: a stub OpenAI-compatible upstream; one gateway at a time —
 * Portkey (`@portkey-ai/gateway`, no authentication or billing), ours on
 * in-memory PGlite (from source), ours built (`dist/`) on embedded PGlite, and
 * ours on PostgreSQL when a URL is set (a throwaway database, as in
 * `npm run bench`); and the load generators (autocannon's CLI, a small
 * time-to-first-byte probe), each in its own process. For each gateway the
 * same chat-completions request is sent straight to the stub and through the
 * gateway, at 1 connection and at a fixed offered load (streaming: time to
 * first byte), and the script prints the added p50/p99 of each, the maximum
 * rate (64 connections, as fast as they go) with the gateway's CPU time per
 * request at that rate (the steadiest figure on a busy machine), and the
 * gateway's idle RSS.
 *
 * `npm run bench:gateway`; `scripts/with-postgres.sh npm run bench:gateway`
 * adds the PostgreSQL row. `BENCH_SECONDS` (default 10) sets each run's
 * length, `BENCH_RATE` (default 500) the offered load, `BENCH_GATEWAYS` a
 * comma-separated subset of `portkey`, `in-memory`, `pglite`, `postgres`;
 * `BENCH_PROFILE=1` profiles the built servers (`--cpu-prof`) and prints their
 * top functions by self time during the maximum-rate run.
 *
 * A/B against other revisions: `BENCH_REVISIONS` (comma-separated git
 * revisions, e.g. `main`) adds the built server of each (installed and built
 * by `scripts/bench/revisions.ts`, run with its own `npm start` options) on
 * embedded PGlite; `BENCH_ROUNDS` (default 1) measures every gateway that
 * many times, alternating, and prints the medians of each with their ratio
 * to the working tree's. `BENCH_NODE_FLAGS` adds the working tree's built
 * server run with those Node/V8 flags (what a start script would pass).
 */
import { createRequire } from "node:module"
import { join } from "node:path"
import { startStubUpstream } from "../test/support/StubUpstream.ts"
import { type Child, freePort, runScript, spawnChild, waitUntilReady } from "./bench/children.ts"
import type { Latency, Target } from "./bench/ttfb-probe.ts"
import { builtServerBehindStub, startInMemoryServer } from "./bench/in-memory-server.ts"
import { postgresFromEnv, postgresNotSet, throwawayDatabase } from "./bench/databases.ts"
import { monotonicMicros, printSelfTimes } from "./bench/cpu-profile.ts"
import { flagFromEnv, listFromEnv, numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, resultsDir, writeResults } from "./bench/report.ts"
import { type Checkout, checkoutOf, workingTree } from "./bench/revisions.ts"
import { cpuSecondsOf, ensureBuilt, memoryOf, type OperatorApi, root, startPlatform, tenantHeaders } from "./bench/servers.ts"
import { median } from "./bench/stats.ts"

const seconds = numberFromEnv("BENCH_SECONDS", 10)
const rate = numberFromEnv("BENCH_RATE", 500)
const warmUpSeconds = Math.ceil(seconds / 2)
const profiling = flagFromEnv("BENCH_PROFILE")
const rounds = numberFromEnv("BENCH_ROUNDS", 1)
const revisions = listFromEnv("BENCH_REVISIONS") ?? []
const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter((flag) => flag !== "") ?? []
const node = process.execPath
const resolve = createRequire(import.meta.url).resolve

// ---------------------------------------------------------------------------
// Child role: the stub upstream.
// ---------------------------------------------------------------------------

const runStub = async () => {
  const stub = await startStubUpstream({ record: false })
  process.stdout.write(`${stub.url}\n`)
}

// ---------------------------------------------------------------------------
// The orchestrator.
// ---------------------------------------------------------------------------

const outputOf = async (args: ReadonlyArray<string>) => {
  const child = spawnChild(node, args)
  const exit = await child.exited
  if (exit !== 0) throw new Error(`${args[0]} exited with ${exit}: ${child.stderr()}`)
  return child.stdout()
}

/** autocannon in its own process for `duration` s; `perSecond` 0 means as fast as the connections go. */
const autocannon = async (target: Target, connections: number, perSecond: number, duration = seconds) => {
  const headers = Object.entries({ ...target.headers, "content-type": "application/json" }).flatMap(([key, value]) => ["-H", `${key}=${value}`])
  const result = JSON.parse(await outputOf([
    resolve("autocannon/autocannon.js"),
    "--json",
    "-c", String(connections),
    "-d", String(duration),
    ...(perSecond > 0 ? ["-R", String(perSecond)] : []),
    "-m", "POST",
    ...headers,
    "-b", target.body,
    target.url
  ]))
  return {
    p50: result.latency.p50 as number,
    p99: result.latency.p99 as number,
    requests: result.requests.total as number,
    failures: (result.non2xx + result.errors + result.timeouts) as number,
    rate: result.requests.average as number
  }
}

const probe = async (target: Target, perSecond: number): Promise<Latency> =>
  JSON.parse(await outputOf([join(root, "scripts/bench/ttfb-probe.ts"), JSON.stringify(target), String(perSecond), String(seconds)]))

const messages = [{ role: "user", content: "Say hello" }]

const targetOf = (url: string, headers: Record<string, string>, model: string) => (stream: boolean): Target => ({
  url,
  headers,
  body: JSON.stringify({ model, messages, ...(stream ? { stream: true } : {}) })
})

type GatewayName = "portkey" | "in-memory" | "pglite" | "postgres"

/** A gateway under test: its process and how to send it the benchmark request. */
interface Gateway {
  readonly name: string
  readonly child: Child
  readonly target: (stream: boolean) => Target
  /** Where the gateway writes its CPU profile when it stops (`BENCH_PROFILE=1`, built servers). */
  readonly profile?: string
}

const ourGateway = async (name: string, server: OperatorApi & { readonly child: Child }): Promise<Gateway> => ({
  name,
  child: server.child,
  target: targetOf(
    `${server.baseUrl}/api/v0/chat/completions`,
    await tenantHeaders(server, { name: "Bench", creditLimit: 1_000_000_000_000 }),
    "bench"
  )
})

const startPortkey = async (stubUrl: string): Promise<Gateway> => {
  const port = await freePort()
  const child = spawnChild(node, [resolve("@portkey-ai/gateway/build/start-server.js"), `--port=${port}`, "--headless"], {
    env: { ...process.env, NODE_ENV: "production" },
    server: "Portkey's gateway"
  })
  await waitUntilReady(child, `http://127.0.0.1:${port}/`)
  const headers = { "x-portkey-provider": "openai", "x-portkey-custom-host": stubUrl, authorization: "Bearer stub" }
  return { name: "Portkey open-source gateway", child, target: targetOf(`http://127.0.0.1:${port}/v1/chat/completions`, headers, "stub") }
}

const startInMemory = async (stubUrl: string) => ourGateway("ours, in-memory PGlite (from source)", await startInMemoryServer(stubUrl))

const profileDir = join(resultsDir, "profiles")

const startBuilt = async (name: string, stubUrl: string, databaseUrl?: string, checkout: Checkout = workingTree) => {
  const profileName = `gateway-${databaseUrl === undefined ? "pglite" : "postgres"}-${Date.now()}.cpuprofile`
  const server = await startPlatform({
    databaseUrl,
    nodeArgs: profiling ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profileName}`] : [],
    env: builtServerBehindStub(stubUrl),
    checkout
  })
  return { ...(await ourGateway(name, server)), profile: join(profileDir, profileName) }
}

interface Measured {
  readonly name: string
  readonly atRate: { readonly gateway: Latency }
  readonly saturated: { readonly rate: number }
}

/** Per gateway, the medians over the rounds of its maximum rate and of its own p99 at the offered load, and their ratios to the first gateway's. */
const printMedians = (measured: ReadonlyArray<Measured>) => {
  const names = [...new Set(measured.map((row) => row.name))]
  const medians = names.map((name) => {
    const runs = measured.filter((row) => row.name === name)
    return {
      name,
      maxRate: median(runs.map((row) => row.saturated.rate)),
      p99: median(runs.map((row) => row.atRate.gateway.p99)),
      raw: runs.map((row) => `${integer(row.saturated.rate)}/s, ${fixed(row.atRate.gateway.p99, 2)} ms`).join("; ")
    }
  })
  const [reference] = medians
  console.log(`\nMedians over ${rounds} alternating rounds; ratios to ${reference.name}`)
  console.log(formatTable(
    ["gateway", "max req/s", "ratio", `p99 ms at ${rate}/s`, "ratio", "each round (max req/s, p99)"],
    medians.map((row) => [
      row.name,
      integer(row.maxRate),
      fixed(row.maxRate / reference.maxRate, 2),
      fixed(row.p99, 2),
      fixed(row.p99 / reference.p99, 2),
      row.raw
    ])
  ))
}

const main = async () => {
  ensureBuilt()
  const startedAt = new Date()
  const stub = spawnChild(node, [import.meta.filename, "stub"], { server: "the stub upstream" })
  while (!stub.stdout().includes("\n")) await new Promise((done) => setTimeout(done, 20))
  const stubUrl = stub.stdout().trim()
  const direct = targetOf(`${stubUrl}/chat/completions`, {}, "stub")
  const postgres = postgresFromEnv()
  const checkouts = revisions.map(checkoutOf)
  const all: Array<readonly [GatewayName, () => Promise<Gateway>]> = [
    ["portkey", () => startPortkey(stubUrl)],
    ["in-memory", () => startInMemory(stubUrl)],
    ["pglite", () => startBuilt("ours, embedded PGlite (the default)", stubUrl)],
    ...(postgres === undefined ? [] : [
      ["postgres", async () => startBuilt("ours, PostgreSQL", stubUrl, (await throwawayDatabase(postgres.url)).url)] as const
    ])
  ]
  const chosen = listFromEnv("BENCH_GATEWAYS", ["portkey", "in-memory", "pglite", "postgres"])
  const starts = [
    ...all.filter(([name]) => chosen === undefined || chosen.includes(name)).map(([, start]) => start),
    ...checkouts.map((checkout) => () => startBuilt(`ours at ${checkout.label}, embedded PGlite`, stubUrl, undefined, checkout)),
    ...(nodeFlags.length === 0 ? [] : [() =>
      startBuilt(`ours, embedded PGlite, node ${nodeFlags.join(" ")}`, stubUrl, undefined, {
        ...workingTree,
        nodeOptions: [...workingTree.nodeOptions, ...nodeFlags]
      })
    ])
  ]
  const measured = []
  const profiles = []
  for (let round = 1; round <= rounds; round++) for (const start of starts) {
    const gateway = await start()
    const idle = memoryOf(gateway.child.pid)
    // Warm both routes, plain and streamed (JIT, lazily compiled functions, connection pools, the first
    // database writes): a streamed call runs code a plain one never reaches.
    for (const stream of [false, true]) {
      await autocannon(direct(stream), 4, 0, warmUpSeconds)
      await autocannon(gateway.target(stream), 4, 0, warmUpSeconds)
    }
    const pair = async (measure: (target: Target) => Promise<Latency>, stream: boolean) => {
      const baseline = await measure(direct(stream))
      const through = await measure(gateway.target(stream))
      return { direct: baseline, gateway: through, addedP50: through.p50 - baseline.p50, addedP99: through.p99 - baseline.p99 }
    }
    const oneConnection = await pair((target) => probe(target, 0), false)
    const atRate = await pair((target) => probe(target, rate), false)
    const streamingAtRate = await pair((target) => probe(target, rate), true)
    const cpuBefore = cpuSecondsOf(gateway.child.pid)
    const fromMicros = monotonicMicros()
    const saturated = await autocannon(gateway.target(false), 64, 0)
    const toMicros = monotonicMicros()
    const cpuAfter = cpuSecondsOf(gateway.child.pid)
    const cpuMicrosPerRequest = cpuBefore === undefined || cpuAfter === undefined || saturated.requests === 0
      ? undefined
      : (1e6 * (cpuAfter - cpuBefore)) / saturated.requests
    measured.push({ name: gateway.name, round, idleRssMb: idle?.rssMb, oneConnection, atRate, streamingAtRate, saturated, cpuMicrosPerRequest })
    await gateway.child.stop()
    if (profiling && gateway.profile !== undefined) {
      profiles.push({ gateway: gateway.name, ...printSelfTimes(`${gateway.name} at its maximum rate`, gateway.profile, root, { fromMicros, toMicros }) })
    }
  }

  const ms = (value: number) => fixed(value, 2)
  /** The added figure, or how many of the gateway's requests failed (then the figure means nothing). */
  const added = (run: { readonly gateway: Latency }, value: number) =>
    run.gateway.failures > 0 ? `${integer(run.gateway.failures)} failed` : ms(value)
  console.log(`\nGateway added latency, non-streaming unless said (${seconds} s per run, ${rate} req/s offered; node ${process.version})`)
  console.log(formatTable(
    ["gateway", "1 conn p50 ms", "1 conn p99 ms", `${rate}/s p50 ms`, `${rate}/s p99 ms`, `stream TTFB ${rate}/s p99 ms`, "max req/s", "CPU µs/req", "idle RSS MB", "max-rate failures"],
    measured.map((row) => [
      rounds > 1 ? `${row.name} (round ${row.round})` : row.name,
      added(row.oneConnection, row.oneConnection.addedP50),
      added(row.oneConnection, row.oneConnection.addedP99),
      added(row.atRate, row.atRate.addedP50),
      added(row.atRate, row.atRate.addedP99),
      added(row.streamingAtRate, row.streamingAtRate.addedP99),
      integer(row.saturated.rate),
      row.cpuMicrosPerRequest === undefined ? "-" : integer(row.cpuMicrosPerRequest),
      row.idleRssMb === undefined ? "-" : integer(row.idleRssMb),
      integer(row.saturated.failures)
    ])
  ))
  const probeRuns = measured.flatMap((row) =>
    ([["1 connection", row.oneConnection], [`${rate}/s`, row.atRate], [`streamed at ${rate}/s`, row.streamingAtRate]] as const)
      .flatMap(([run, pair]) => [[`direct, ${run}`, pair.direct], [`${row.name}, ${run}`, pair.gateway]] as const))
  for (const [label, latency] of probeRuns) {
    if (latency.failures > 0) console.log(`${label}: failed ${JSON.stringify(latency.failedBy)}`)
  }
  if (rounds > 1) printMedians(measured)
  if (postgres === undefined) console.log(postgresNotSet)
  console.log(`Results: ${writeResults("gateway", startedAt, { seconds, rate, node: process.version, measured, profiles })}`)
}

const role = process.argv[2]
if (role === "stub") {
  await runStub()
} else {
  runScript(main)
}
