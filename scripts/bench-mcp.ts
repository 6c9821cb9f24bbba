// `npm run bench:mcp`: what running an operation through the MCP server costs
// over the same REST call, measured in one run against the built service on
// the embedded database. Three ways to read one project:
//   - REST:           GET  /api/v0/projects/{id}                        (the baseline)
//   - MCP over REST:  POST /api/v0/mcp/tools/call  platform_execute_action
//   - MCP JSON-RPC:   POST /api/v0/mcp             tools/call, same tool
// Latency: requests back to back on one keep-alive connection (sub-millisecond
// timings from this process, which does nothing else meanwhile), p50 and p99;
// the three ways take turns in short slices (BENCH_ROUNDS), so that a busy
// machine's drift weighs on each alike.
// Throughput: autocannon in its own process with BENCH_CONNECTIONS connections.
// BENCH_DURATION (seconds, default 10) sets each run's length.
import { Agent, request as httpRequest } from "node:http"
import { cpus } from "node:os"
import { request, runScript } from "./bench/children.ts"
import { runLoad } from "./bench/load.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { ensureBuilt, seedTenant, startPlatform } from "./bench/servers.ts"
import { latencySummary } from "./bench/stats.ts"

const settings = {
  durationSeconds: numberFromEnv("BENCH_DURATION", 10),
  warmupSeconds: numberFromEnv("BENCH_WARMUP", 3),
  connections: numberFromEnv("BENCH_CONNECTIONS", 16),
  rounds: Math.max(1, numberFromEnv("BENCH_ROUNDS", 10))
}

interface Target {
  readonly name: string
  readonly url: string
  readonly headers: Record<string, string>
  /** A JSON body (POST), or none (GET). */
  readonly body?: unknown
}

/** Requests back to back on one connection for `seconds`, each one's latency in milliseconds added to `samples`. */
const sequentialLatency = async (target: Target, seconds: number, samples: Array<number>) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const payload = target.body === undefined ? undefined : JSON.stringify(target.body)
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now()
      const req = httpRequest(target.url, {
        method: payload === undefined ? "GET" : "POST",
        agent,
        headers: {
          ...target.headers,
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
        }
      }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`${target.name} answered ${response.statusCode}`))
        response.on("data", () => undefined)
        response.on("end", () => {
          samples.push(performance.now() - started)
          resolve()
        })
      })
      req.on("error", reject)
      req.end(payload)
    })
  const deadline = performance.now() + seconds * 1000
  while (performance.now() < deadline) await once()
  agent.destroy()
}

runScript(async () => {
  const startedAt = new Date()
  ensureBuilt()
  const server = await startPlatform()
  const tenant = await seedTenant(server, 0)
  const headers = { "x-api-key": tenant.apiKey }
  const created = await request(`${server.baseUrl}/api/v0/projects`, { method: "POST", headers, body: { name: "Benchmark" } })
  const project = JSON.parse(created.body) as { id: string }
  const toolCall = { name: "platform_execute_action", arguments: { operationId: "projects_get", project_id: project.id } }
  const rpcMessage = { jsonrpc: "2.0", id: 1, method: "tools/call", params: toolCall }
  const targets: ReadonlyArray<Target> = [
    { name: "REST", url: `${server.baseUrl}/api/v0/projects/${project.id}`, headers },
    { name: "MCP over REST", url: `${server.baseUrl}/api/v0/mcp/tools/call`, headers, body: toolCall },
    {
      name: "MCP JSON-RPC",
      url: `${server.baseUrl}/api/v0/mcp`,
      headers: { ...headers, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: rpcMessage
    }
  ]

  // Each way answers the same project: the benchmark compares like with like.
  const direct = (await request(targets[0].url, { headers })).body
  const viaRest = JSON.parse((await request(targets[1].url, { method: "POST", headers, body: toolCall })).body)
  const viaRpc = JSON.parse((await request(targets[2].url, { method: "POST", headers: targets[2].headers, body: rpcMessage })).body)
  for (const answer of [viaRest, viaRpc.result]) {
    if (JSON.stringify(answer?.structuredContent) !== direct) throw new Error(`MCP answered ${JSON.stringify(answer)}, REST ${direct}`)
  }

  for (const target of targets) {
    await runLoad({ ...target, connections: settings.connections, durationSeconds: settings.warmupSeconds, serverPid: server.child.pid })
  }
  const samples = targets.map((): Array<number> => [])
  for (let round = 0; round < settings.rounds; round++) {
    for (const [index, target] of targets.entries()) {
      await sequentialLatency(target, settings.durationSeconds / settings.rounds, samples[index])
    }
  }
  const results = []
  for (const [index, target] of targets.entries()) {
    const load = await runLoad({ ...target, connections: settings.connections, durationSeconds: settings.durationSeconds, serverPid: server.child.pid })
    if (load.non2xx + load.errors + load.timeouts > 0) throw new Error(`${target.name}: ${JSON.stringify(load.statusCodes)} ${load.errors} errors`)
    results.push({ name: target.name, latency: latencySummary(samples[index]), load })
  }
  await server.child.stop()

  const [rest] = results
  const header = [
    "way",
    "p50 ms (1 conn)",
    "p99 ms (1 conn)",
    "added p50 ms",
    "added p99 ms",
    `req/s (${settings.connections} conn)`,
    "p50 ms",
    "p99 ms",
    "CPU µs/req"
  ]
  const rows = results.map(({ name, latency, load }) => [
    name,
    fixed(latency.p50Ms, 3),
    fixed(latency.p99Ms, 3),
    name === rest.name ? "-" : fixed(latency.p50Ms - rest.latency.p50Ms, 3),
    name === rest.name ? "-" : fixed(latency.p99Ms - rest.latency.p99Ms, 3),
    integer(load.requestsPerSecond),
    fixed(load.p50Ms, 0),
    fixed(load.p99Ms, 0),
    load.serverCpuMicrosPerRequest === undefined ? "-" : integer(load.serverCpuMicrosPerRequest)
  ])
  console.log(`\nMCP tools/call overhead over the direct REST call (GET one project; PGlite; ${settings.durationSeconds} s per run; node ${process.version}; ${cpus().length} CPUs)\n`)
  console.log(formatTable(header, rows))
  console.log(`\nresults: ${writeResults("mcp", startedAt, { settings, results })}`)
})
