// `npm run bench:stall`: requests that could stall the service, against the
// built server (`node dist/main.js`, embedded database) in its own process.
//
// 1. Token counting: `POST /api/v0/anthropic/v1/messages/count_tokens` with
//    one 300,000-character word, and with a body near MAX_BODY_BYTES of
//    unrelated words. While each runs, a probe asks `/health` back to back;
//    its latencies are compared with the same probe on the idle server, in
//    the same run. A count that held the event loop shows as one probe
//    waiting as long as the count. The same 300,000-character word is then
//    counted in this process, timing the thread's own CPU between two turns
//    of its event loop: what the loop is held for, whatever else the machine
//    runs (the probe's wall-clock times include the other processes' share).
// 2. Content tools: `SPAM_CHECKS` (3) spam checks, then as many spintax
//    conversions, of a 500 KB HTML e-mail (the largest `content` taken),
//    back to back on one connection, with the same `/health` probe.
// 3. A burst with a credential not cached yet: `BURST` (10,000) pipelined
//    `GET /api/v0/me` with a fresh company key over `CONNECTIONS` (100)
//    sockets, then the same burst again with the key cached (the baseline);
//    time and the server's resident memory before and after each.
import { connect } from "node:net"
import { performance } from "node:perf_hooks"
import { cpus, loadavg } from "node:os"
import { Effect } from "effect"
import { tokenCounter, TokenizerThreads } from "../src/models/llm/Tokenizer.ts"
import { request, runScript } from "./bench/children.ts"
import { typicalHtmlEmail } from "../test/support/Emails.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { ensureBuilt, memoryOf, type PlatformServer, seedTenant, startPlatform } from "./bench/servers.ts"
import { latencySummary } from "./bench/stats.ts"

const burst = numberFromEnv("BURST", 10_000)
const connections = numberFromEnv("CONNECTIONS", 100)
const idleProbeMs = 2_000
const contentRounds = numberFromEnv("SPAM_CHECKS", 3)

/** Deterministic pseudo-random lowercase letters: no two BPE pieces alike, so no cache helps. */
const letters = (length: number, seed: number) => {
  let state = seed
  const codes = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    state = (state * 16807) % 2147483647
    codes[i] = 97 + (state % 26)
  }
  return Buffer.from(codes).toString("latin1")
}

/** Words of 2 to 10 random letters, separated by spaces, `length` characters in all. */
const words = (length: number, seed: number) => {
  const raw = letters(length, seed)
  let text = ""
  for (let at = 0; at < length;) {
    const size = 2 + (raw.charCodeAt(at) % 9)
    text += raw.slice(at, at + size) + " "
    at += size + 1
  }
  return text.slice(0, length)
}

/** `/health` back to back until `until` settles (or for `forMs`): each answer's latency. */
const probeHealth = async (server: PlatformServer, until: Promise<unknown>) => {
  let done = false
  void until.finally(() => (done = true))
  const latencies: Array<number> = []
  while (!done) {
    const started = performance.now()
    await request(`${server.baseUrl}/health`)
    latencies.push(performance.now() - started)
  }
  return latencySummary(latencies)
}

/**
 * Counts `text` with the service's tokenizer (and its threads) in this
 * process: the thread's CPU milliseconds between turns of its loop.
 */
const cpuPerTurn = (text: string) =>
  Effect.gen(function*() {
    const counter = yield* tokenCounter
    const cpuMs = () => {
      const { user, system } = process.threadCpuUsage()
      return (user + system) / 1_000
    }
    const stretches: Array<number> = []
    let last = cpuMs()
    let counting = true
    const turn = () => {
      if (!counting) return
      const now = cpuMs()
      stretches.push(now - last)
      last = now
      setImmediate(turn)
    }
    setImmediate(turn)
    yield* counter.text(text)
    counting = false
    return latencySummary(stretches)
  }).pipe(Effect.provide(TokenizerThreads), Effect.runPromise)

const countTokens = async (server: PlatformServer, apiKey: string, content: string) => {
  const started = performance.now()
  const answer = await request(`${server.baseUrl}/api/v0/anthropic/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "x-api-key": apiKey },
    body: { model: "claude-haiku-4-5", messages: [{ role: "user", content }] },
    timeoutMs: 120_000
  })
  if (answer.status !== 200) throw new Error(`count_tokens answered ${answer.status}: ${answer.body.slice(0, 200)}`)
  return { ms: performance.now() - started, tokens: (JSON.parse(answer.body) as { input_tokens: number }).input_tokens }
}

/** The typical cold e-mail repeated to just under the content tools' 500 KB limit. */
const largeEmail = typicalHtmlEmail.repeat(Math.floor((500 * 1024) / Buffer.byteLength(typicalHtmlEmail)))

/** `contentRounds` spam checks, then as many spintax conversions, one at a time: the slowest answer's time. */
const contentTools = async (server: PlatformServer, apiKey: string) => {
  let slowestMs = 0
  for (const tool of ["spam-check", "spintax"]) {
    for (let round = 0; round < contentRounds; round++) {
      const started = performance.now()
      const answer = await request(`${server.baseUrl}/api/v0/content/${tool}`, {
        method: "POST",
        headers: { "x-api-key": apiKey },
        body: { content: largeEmail, subject: "Interview reviews for {{company}}" },
        timeoutMs: 120_000
      })
      if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${answer.body.slice(0, 200)}`)
      slowestMs = Math.max(slowestMs, performance.now() - started)
    }
  }
  return { requests: 2 * contentRounds, slowestMs }
}

/** `count` pipelined GETs of `path` on one socket; resolves with the statuses once all answered. */
const pipelined = (server: PlatformServer, path: string, headers: Record<string, string>, count: number) =>
  new Promise<Array<number>>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
    const one = `GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${head}\r\n`
    const statuses: Array<number> = []
    let pending = ""
    socket.setEncoding("latin1")
    socket.on("connect", () => socket.write(one.repeat(count)))
    socket.on("data", (chunk: string) => {
      pending += chunk
      for (const match of pending.matchAll(/HTTP\/1\.1 (\d{3}) /g)) statuses.push(Number(match[1]))
      pending = pending.slice(Math.max(0, pending.lastIndexOf("HTTP/1.1 ") + 12))
      if (statuses.length >= count) {
        socket.destroy()
        resolve(statuses)
      }
    })
    socket.on("error", reject)
  })

const burstOf = async (server: PlatformServer, apiKey: string) => {
  const before = memoryOf(server.child.pid)
  const started = performance.now()
  const perConnection = Math.ceil(burst / connections)
  const statuses = (await Promise.all(
    Array.from({ length: connections }, () => pipelined(server, "/api/v0/me", { "x-api-key": apiKey }, perConnection))
  )).flat()
  const ms = performance.now() - started
  const after = memoryOf(server.child.pid)
  return {
    requests: statuses.length,
    ok: statuses.filter((status) => status === 200).length,
    ms,
    rssBeforeMb: before?.rssMb,
    rssAfterMb: after?.rssMb,
    peakRssMb: after?.peakRssMb
  }
}

runScript(async () => {
  ensureBuilt()
  const startedAt = new Date()
  const server = await startPlatform()
  const tenant = await seedTenant(server, 0)
  await countTokens(server, tenant.apiKey, "warm up the tokenizer")

  const idle = await probeHealth(server, new Promise((resolve) => setTimeout(resolve, idleProbeMs)))
  const word = letters(300_000, 7)
  const wordCount = countTokens(server, tenant.apiKey, word)
  const duringWord = await probeHealth(server, wordCount)
  const bigBody = words(900_000, 11)
  const bodyCount = countTokens(server, tenant.apiKey, bigBody)
  const duringBody = await probeHealth(server, bodyCount)
  await Effect.runPromise(Effect.flatMap(tokenCounter, (counter) => counter.text("warm up")))
  const inProcess = await cpuPerTurn(word)
  const content = contentTools(server, tenant.apiKey)
  const duringContent = await probeHealth(server, content)

  const fresh = await seedTenant(server, 0)
  const freshBurst = await burstOf(server, fresh.apiKey)
  const cachedBurst = await burstOf(server, fresh.apiKey)
  await server.child.stop()

  const results = {
    startedAt,
    machine: { cpus: cpus().length, loadAverage: loadavg()[0] },
    countTokens: {
      word300k: { ...(await wordCount), healthWhileCounting: duringWord },
      words900k: { ...(await bodyCount), healthWhileCounting: duringBody },
      healthIdle: idle,
      word300kCpuPerLoopTurn: inProcess
    },
    contentTools: { emailBytes: Buffer.byteLength(largeEmail), ...(await content), healthWhileRunning: duringContent },
    burst: { requests: burst, connections, freshKey: freshBurst, cachedKey: cachedBurst }
  }
  console.log(`machine: ${cpus().length} CPUs, load ${fixed(loadavg()[0], 2)}\n`)
  console.log(formatTable(["count_tokens body", "answer ms", "tokens", "/health probes", "p50 ms", "p99 ms", "max ms"], [
    ["(none: idle server)", "", "", integer(idle.count), fixed(idle.p50Ms), fixed(idle.p99Ms), fixed(idle.maxMs)],
    ["one 300,000-character word", integer(results.countTokens.word300k.ms), integer(results.countTokens.word300k.tokens), integer(duringWord.count), fixed(duringWord.p50Ms), fixed(duringWord.p99Ms), fixed(duringWord.maxMs)],
    ["900,000 characters of words", integer(results.countTokens.words900k.ms), integer(results.countTokens.words900k.tokens), integer(duringBody.count), fixed(duringBody.p50Ms), fixed(duringBody.p99Ms), fixed(duringBody.maxMs)]
  ]))
  console.log(`\nthe same word counted in this process: ${integer(inProcess.count)} turns of the event loop, ` +
    `main-thread CPU per turn p50 ${fixed(inProcess.p50Ms)} ms, p99 ${fixed(inProcess.p99Ms)} ms, max ${fixed(inProcess.maxMs)} ms`)
  console.log("")
  const tools = await content
  console.log(formatTable(["content tools (500 KB e-mail)", "requests", "slowest answer ms", "/health probes", "p50 ms", "p99 ms", "max ms"], [
    ["spam check, then spintax", integer(tools.requests), integer(tools.slowestMs), integer(duringContent.count), fixed(duringContent.p50Ms), fixed(duringContent.p99Ms), fixed(duringContent.maxMs)]
  ]))
  console.log("")
  console.log(formatTable(["GET /me burst", "requests", "200s", "ms", "RSS before MB", "RSS after MB", "peak RSS MB"], [
    ["fresh key (not cached)", integer(freshBurst.requests), integer(freshBurst.ok), integer(freshBurst.ms), fixed(freshBurst.rssBeforeMb ?? NaN), fixed(freshBurst.rssAfterMb ?? NaN), fixed(freshBurst.peakRssMb ?? NaN)],
    ["same key, cached (baseline)", integer(cachedBurst.requests), integer(cachedBurst.ok), integer(cachedBurst.ms), fixed(cachedBurst.rssBeforeMb ?? NaN), fixed(cachedBurst.rssAfterMb ?? NaN), fixed(cachedBurst.peakRssMb ?? NaN)]
  ]))
  writeResults("stall", startedAt, results)
})
