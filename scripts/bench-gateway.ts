/**
 * The gateway's added latency over a direct upstream call.
 *
 * Processes: a stub OpenAI-compatible upstream, the built server (`dist/`,
 * embedded PGlite in a throwaway data folder) routing one model to it, and
 * the load generators (autocannon's CLI; a small time-to-first-byte probe),
 * each in its own process. The same chat-completions request is sent (a)
 * straight to the stub and (b) through the gateway, non-streaming and
 * streaming, at 1 connection and at a fixed offered load; the script prints
 * p50/p99 of each and of (b) − (a), and the gateway's maximum sustainable
 * rate (many connections, no rate limit, no errors). The maximum rate is
 * also measured for the same server on the memory storage backend, which
 * separates the gateway's own cost from the cost of its database writes
 * (each request reads the balance and debits it in a transaction).
 *
 * Run with Node 24: `npm run bench:gateway`. `BENCH_SECONDS` (default 10)
 * sets each run's length, `BENCH_RATE` (default 500) the offered load.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, createServer as createHttpServer, request } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer, Option, Redacted } from "effect"
import { makeServer } from "../src/app/Server.ts"
import { AppConfig } from "../src/platform/AppConfig.ts"
import { memoryStorage } from "../src/app/Storage.ts"
import { startStubUpstream } from "../test/support/StubUpstream.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const rate = Number(process.env.BENCH_RATE ?? 500)
const root = join(import.meta.dirname, "..")
const node = process.execPath

interface Target {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

interface Latency {
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly failures: number
}

// ---------------------------------------------------------------------------
// Child roles: the stub upstream, and the time-to-first-byte probe.
// ---------------------------------------------------------------------------

const adminKey = "bench-admin-key"

/** The gateway routes model `bench` to the stub as upstream model `stub`. */
const benchModels = [{ id: "bench", provider: "openai" as const, upstream: "stub" }]

/** The same service on the memory storage backend (from source), on `port`. */
const runMemoryServer = (port: number, stubUrl: string) =>
  Layer.launch(makeServer(NodeHttpServer.layer(createHttpServer, { host: "127.0.0.1", port }), memoryStorage, { logAddress: false }).pipe(
    Layer.provide(AppConfig.layerWith({
      adminApiKey: Option.some(Redacted.make(adminKey)),
      rateLimitPerMinute: 1_000_000_000,
      logLevel: "Error",
      bootstrap: false,
      llmModels: Option.some(benchModels),
      openaiBaseUrl: Option.some(stubUrl)
    }))
  )).pipe(NodeRuntime.runMain)

const runStub = async () => {
  const stub = await startStubUpstream({ record: false })
  process.stdout.write(`${stub.url}\n`)
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** Sends `target` for `seconds`: back to back on one connection (`perSecond` 0), or open-loop at `perSecond`. */
const runProbe = async (target: Target, perSecond: number, duration: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: perSecond === 0 ? 1 : 256 })
  const url = new URL(target.url)
  const samples: Array<number> = []
  let failures = 0
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now()
      let first = true
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent,
        headers: { ...target.headers, "content-type": "application/json", "content-length": Buffer.byteLength(target.body) }
      }, (res) => {
        if (res.statusCode !== 200) failures++
        res.on("data", () => {
          if (first) samples.push(performance.now() - started)
          first = false
        })
        res.on("end", resolve)
        res.on("error", () => {
          failures++
          resolve()
        })
      })
      req.on("error", () => {
        failures++
        resolve()
      })
      req.end(target.body)
    })
  const deadline = performance.now() + duration * 1000
  if (perSecond === 0) {
    while (performance.now() < deadline) await once()
  } else {
    const pending: Array<Promise<void>> = []
    const start = performance.now()
    let sent = 0
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const now = performance.now()
        const due = Math.floor(((now - start) / 1000) * perSecond)
        while (sent < due) {
          pending.push(once())
          sent++
        }
        if (now >= deadline) {
          clearInterval(timer)
          resolve()
        }
      }, 1)
    })
    await Promise.all(pending)
  }
  agent.destroy()
  const sorted = samples.sort((a, b) => a - b)
  const result: Latency = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), requests: samples.length, failures }
  process.stdout.write(JSON.stringify(result))
}

// ---------------------------------------------------------------------------
// The orchestrator.
// ---------------------------------------------------------------------------

const children: Array<ChildProcess> = []

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const firstLine = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let buffered = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString()
      const end = buffered.indexOf("\n")
      if (end >= 0) resolve(buffered.slice(0, end))
    })
    child.on("exit", (code) => reject(new Error(`child exited with ${code}`)))
  })

const output = (command: string, args: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] })
    let text = ""
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()))
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`${command} exited with ${code}`))))
  })

const waitFor = async (url: string) => {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not come up`)
}

/** An organization with ample credits, a company and its owner's personal access key, as request headers. */
const tenantHeaders = async (base: string) => {
  const organization = await admin(base, "/organizations", { name: "Bench", creditLimit: 1_000_000_000_000 })
  const user = await admin(base, "/users", { email: "bench@example.com" })
  const company = await admin(base, "/companies", { organizationId: organization.id, name: "Bench" })
  await admin(base, `/companies/${company.id}/users`, { userId: user.id, role: "owner" })
  const key = await admin(base, `/users/${user.id}/personal-access-keys`, { name: "bench" })
  return { authorization: `Bearer ${key.key}`, "x-company-id": company.id as string }
}

const admin = async (base: string, path: string, body: unknown) => {
  const response = await fetch(`${base}/api/v0/admin${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (response.status !== 201) throw new Error(`admin ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, any>
}

/** autocannon in its own process; `perSecond` 0 means as fast as the connections go. */
const autocannon = async (target: Target, connections: number, perSecond: number): Promise<Latency & { readonly rate: number }> => {
  const headers = Object.entries({ ...target.headers, "content-type": "application/json" }).flatMap(([key, value]) => ["-H", `${key}=${value}`])
  const text = await output(node, [
    join(root, "node_modules/autocannon/autocannon.js"),
    "--json",
    "-c",
    String(connections),
    "-d",
    String(seconds),
    ...(perSecond > 0 ? ["-R", String(perSecond)] : []),
    "-m",
    "POST",
    ...headers,
    "-b",
    target.body,
    target.url
  ])
  const result = JSON.parse(text)
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
    rate: result.requests.average
  }
}

const probe = async (target: Target, perSecond: number): Promise<Latency> =>
  JSON.parse(await output(node, [import.meta.filename, "probe", JSON.stringify(target), String(perSecond), String(seconds)]))

const main = async () => {
  execFileSync(node, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" })
  const stub = spawn(node, [import.meta.filename, "stub"], { stdio: ["ignore", "pipe", "inherit"] })
  children.push(stub)
  const stubUrl = await firstLine(stub)

  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gateway-"))
  const server = spawn(node, [join(root, "dist/main.js")], {
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: dataDir,
      BOOTSTRAP: "off",
      ADMIN_API_KEY: adminKey,
      RATE_LIMIT_PER_MINUTE: "1000000000",
      LOG_LEVEL: "Error",
      LLM_MODELS: JSON.stringify(benchModels),
      OPENAI_BASE_URL: stubUrl
    }
  })
  children.push(server)
  const base = `http://127.0.0.1:${port}`
  await waitFor(`${base}/health`)

  const messages = [{ role: "user", content: "Say hello" }]
  const direct = (stream: boolean): Target => ({
    url: `${stubUrl}/chat/completions`,
    headers: {},
    body: JSON.stringify({ model: "stub", messages, ...(stream ? { stream: true } : {}) })
  })
  const gatewayAt = async (serverBase: string) => {
    const headers = await tenantHeaders(serverBase)
    return (stream: boolean): Target => ({
      url: `${serverBase}/api/v0/chat/completions`,
      headers,
      body: JSON.stringify({ model: "bench", messages, ...(stream ? { stream: true } : {}) })
    })
  }
  const gateway = await gatewayAt(base)

  // Warm both paths (JIT, connection pools, the first PGlite writes).
  await autocannon(direct(false), 4, 0)
  await autocannon(gateway(false), 4, 0)

  const rows: Array<Record<string, string | number>> = []
  const round = (value: number) => Math.round(value * 1000) / 1000
  const compare = async (label: string, measure: (target: Target) => Promise<Latency>, stream: boolean) => {
    const a = await measure(direct(stream))
    const b = await measure(gateway(stream))
    rows.push({
      run: label,
      "direct p50 ms": round(a.p50),
      "direct p99 ms": round(a.p99),
      "gateway p50 ms": round(b.p50),
      "gateway p99 ms": round(b.p99),
      "added p50 ms": round(b.p50 - a.p50),
      "added p99 ms": round(b.p99 - a.p99),
      requests: `${a.requests} / ${b.requests}`,
      failures: a.failures + b.failures
    })
  }
  await compare("non-streaming, 1 connection (autocannon)", (target) => autocannon(target, 1, 0), false)
  await compare(`non-streaming, ${rate} req/s (autocannon)`, (target) => autocannon(target, 64, rate), false)
  await compare("non-streaming, 1 connection (probe)", (target) => probe(target, 0), false)
  await compare(`non-streaming, ${rate} req/s (probe)`, (target) => probe(target, rate), false)
  await compare("streaming TTFB, 1 connection (probe)", (target) => probe(target, 0), true)
  await compare(`streaming TTFB, ${rate} req/s (probe)`, (target) => probe(target, rate), true)
  await compare("streaming complete, 1 connection (autocannon)", (target) => autocannon(target, 1, 0), true)
  await compare(`streaming complete, ${rate} req/s (autocannon)`, (target) => autocannon(target, 64, rate), true)
  const saturated = await autocannon(gateway(false), 64, 0)
  const directSaturated = await autocannon(direct(false), 64, 0)
  server.kill("SIGTERM")

  const memoryPort = await freePort()
  children.push(spawn(node, [import.meta.filename, "memory-server", String(memoryPort), stubUrl], { stdio: ["ignore", "ignore", "inherit"] }))
  const memoryBase = `http://127.0.0.1:${memoryPort}`
  await waitFor(`${memoryBase}/health`)
  const memoryGateway = await gatewayAt(memoryBase)
  await autocannon(memoryGateway(false), 4, 0)
  const memoryOneConnection = await probe(memoryGateway(false), 0)
  const memoryDirect = await probe(direct(false), 0)
  const memoryAtRate = await probe(memoryGateway(false), rate)
  const memoryDirectAtRate = await probe(direct(false), rate)
  const memorySaturated = await autocannon(memoryGateway(false), 64, 0)

  console.log(`\nGateway added latency (${seconds} s per run; node ${process.version})`)
  console.table(rows)
  console.log(
    `Maximum rate, non-streaming, 64 connections: gateway ${Math.round(saturated.rate)} req/s ` +
      `(p50 ${saturated.p50} ms, p99 ${saturated.p99} ms, ${saturated.failures} failures); ` +
      `stub alone ${Math.round(directSaturated.rate)} req/s`
  )
  console.log(
    `Same server on the memory storage backend: maximum ${Math.round(memorySaturated.rate)} req/s ` +
      `(p50 ${memorySaturated.p50} ms, p99 ${memorySaturated.p99} ms, ${memorySaturated.failures} failures); ` +
      `added at 1 connection p50 ${round(memoryOneConnection.p50 - memoryDirect.p50)} ms, ` +
      `p99 ${round(memoryOneConnection.p99 - memoryDirect.p99)} ms; ` +
      `added at ${rate} req/s p50 ${round(memoryAtRate.p50 - memoryDirectAtRate.p50)} ms, ` +
      `p99 ${round(memoryAtRate.p99 - memoryDirectAtRate.p99)} ms`
  )
  rmSync(dataDir, { recursive: true, force: true })
}

const role = process.argv[2]
if (role === "stub") {
  await runStub()
} else if (role === "memory-server") {
  runMemoryServer(Number(process.argv[3]), process.argv[4])
} else if (role === "probe") {
  await runProbe(JSON.parse(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]))
} else {
  try {
    await main()
  } finally {
    for (const child of children) child.kill("SIGTERM")
  }
}
