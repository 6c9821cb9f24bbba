// `npm run bench:pages` (under scripts/with-postgres.sh, or with BENCH_DATABASE_URL set, for PostgreSQL as well as
// PGlite): a published landing page, GET /p/{companySlug}/{slug}, served by the built platform in its own process as
// `npm start` runs it (its Node flags, its workers, PGlite in a data folder) versus a raw `node:http` server in its
// own process answering the same bytes with the same headers, measured alternately in the same run (BENCH_ROUNDS
// rounds of BENCH_SECONDS seconds each after BENCH_WARMUP_SECONDS unmeasured, BENCH_CONNECTIONS connections, by
// autocannon in a child process). Reports requests/s, p50/p99, server CPU time per request and the platform's share
// of the raw server's requests/s; the platform's `/health` (no database, no middleware of its own) is measured in the
// same rounds as the framework's ceiling, and with BENCH_BASE=<git revision> (e.g. main) that revision's platform too.
// BENCH_PROFILE=1 profiles the platform (`--cpu-prof`) and prints its top functions by self time under the page's load.
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import { freePort, makeTempDir, runScript, spawnChild, waitUntilReady } from "./bench/children.ts"
import { printSelfTimes } from "./bench/cpu-profile.ts"
import { postgresFromEnv, postgresNotSet, throwawayDatabase } from "./bench/databases.ts"
import { flagFromEnv, numberFromEnv } from "./bench/env.ts"
import { runLoad, type LoadResult } from "./bench/load.ts"
import { fixed, formatTable, integer } from "./bench/report.ts"
import { type Checkout, checkoutOf } from "./bench/revisions.ts"
import { ensureBuilt, type PlatformServer, root, seedTenant, startPlatform } from "./bench/servers.ts"

const seconds = numberFromEnv("BENCH_SECONDS", 5)
const rounds = numberFromEnv("BENCH_ROUNDS", 2)
const connections = numberFromEnv("BENCH_CONNECTIONS", 32)
const warmupSeconds = numberFromEnv("BENCH_WARMUP_SECONDS", 1)
const profiling = flagFromEnv("BENCH_PROFILE")

/** A typical landing page: a hero, three feature blocks, a form, some CSS. */
const pageHtml = `<header class="hero"><h1>Ship faster with Acme</h1><p>The platform teams trust for launches.</p>
<a class="cta" href="https://example.com/signup">Start free</a></header>
${["Fast", "Safe", "Simple"].map((title) => `<section class="feature"><h2>${title}</h2><p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(6)}</p><img src="https://example.com/${title}.png" alt="${title}"></section>`).join("\n")}
<form><label for="email">E-mail</label><input id="email" name="email" type="email" required><input name="firstName"><button type="submit">Get the guide</button></form>`
const pageCss = `.hero{padding:64px;background:#0b1f3a;color:#fff}.feature{padding:24px;max-width:720px;margin:auto}.cta{background:#ff5a36;color:#fff;padding:12px 24px;border-radius:6px}`

interface Recorded {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** The raw server, in this process: every request answered with the recorded page (`baseline <port> <file>`). */
const baseline = (port: number, file: string) => {
  const recorded = JSON.parse(readFileSync(file, "utf8")) as Recorded
  const body = Buffer.from(recorded.body)
  createServer((_request, response) => {
    response.writeHead(recorded.status, { ...recorded.headers, "content-length": body.length })
    response.end(body)
  }).listen(port, "127.0.0.1")
}

const json = async (url: string, init: RequestInit & { readonly body?: string }) => {
  const response = await fetch(url, { ...init, headers: { "content-type": "application/json", ...init.headers } })
  if (response.status >= 300) throw new Error(`${init.method ?? "GET"} ${url} answered ${response.status}: ${await response.text()}`)
  return await response.json() as Record<string, any>
}

/** The raw server in its own process, ready once it answers `path`. */
const startBaseline = async (file: string, path: string) => {
  const port = await freePort()
  const child = spawnChild(process.execPath, [import.meta.filename, "baseline", String(port), file], { server: "the raw node:http server" })
  const baseUrl = `http://127.0.0.1:${port}`
  await waitUntilReady(child, `${baseUrl}${path}`)
  return { child, baseUrl }
}

/** A tenant of `platform` with the page published; answers the page's path. */
const publishedPath = async (platform: PlatformServer) => {
  const tenant = await seedTenant(platform, 0)
  const page = await json(`${platform.baseUrl}/api/v0/landing-pages`, {
    method: "POST",
    headers: { "x-api-key": tenant.apiKey },
    body: JSON.stringify({ name: "Launch", slug: "launch", status: "published", bodyDocument: { html: pageHtml, css: pageCss } })
  })
  return new URL(page.url).pathname
}

/** `BENCH_BASE`: another git revision's platform (e.g. `main`), measured in the same rounds. */
const baseRevision = process.env.BENCH_BASE

const measure = async (backend: string, newDatabase: () => Promise<string | undefined>, base: Checkout | undefined) => {
  const profileDir = makeTempDir("bench-pages-profile-")
  const profileFile = join(profileDir, "platform.cpuprofile")
  const platform = await startPlatform({
    databaseUrl: await newDatabase(),
    nodeArgs: profiling ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=platform.cpuprofile"] : []
  })
  const path = await publishedPath(platform)
  const basePlatform = base === undefined ? undefined : await startPlatform({ databaseUrl: await newDatabase(), checkout: base })
  const basePath = basePlatform === undefined ? undefined : await publishedPath(basePlatform)
  const served = await fetch(`${platform.baseUrl}${path}`)
  const headers: Record<string, string> = {}
  for (const name of ["content-type", "content-security-policy", "etag", "cache-control", "x-content-type-options", "referrer-policy", "x-frame-options"]) {
    headers[name] = served.headers.get(name) ?? ""
  }
  const recorded: Recorded = { status: served.status, headers, body: await served.text() }
  const file = join(makeTempDir("bench-pages-"), "page.json")
  writeFileSync(file, JSON.stringify(recorded))
  const raw = await startBaseline(file, path)
  const rawBody = await (await fetch(`${raw.baseUrl}${path}`)).text()
  if (rawBody !== recorded.body) throw new Error("the raw server does not answer the same bytes")

  const targets: ReadonlyArray<readonly [string, { readonly baseUrl: string; readonly child: { readonly pid: number } }, string]> = [
    ["platform", platform, path],
    ["platform /health", platform, "/health"],
    ...(basePlatform === undefined ? [] : [[`platform at ${base!.label}`, basePlatform, basePath!] as const]),
    ["raw", raw, path]
  ]
  const results = new Map<string, Array<LoadResult>>(targets.map(([name]) => [name, []]))
  // Unmeasured: each server's code compiled by the JIT before the rounds, as a long-running server's would be.
  for (const [, server, target] of targets) {
    await runLoad({ url: `${server.baseUrl}${target}`, headers: {}, connections, durationSeconds: warmupSeconds, serverPid: server.child.pid })
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, server, target] of targets) {
      const result = await runLoad({ url: `${server.baseUrl}${target}`, headers: {}, connections, durationSeconds: seconds, serverPid: server.child.pid })
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      results.get(name)!.push(result)
    }
  }
  await Promise.all([platform.child.stop(), raw.child.stop(), basePlatform?.child.stop()])
  const best = (name: string) => results.get(name)!.toSorted((a, b) => b.requestsPerSecond - a.requestsPerSecond)[0]!
  const rows = targets.map(([name]) => {
    const top = best(name)
    return [
      name,
      integer(top.requestsPerSecond),
      fixed(top.p50Ms),
      fixed(top.p99Ms),
      top.serverCpuMicrosPerRequest === undefined ? "" : integer(top.serverCpuMicrosPerRequest),
      results.get(name)!.map((r) => integer(r.requestsPerSecond)).join(" / ")
    ]
  })
  console.log(`\n${backend}: GET ${path} (${integer(recorded.body.length)} bytes), ${connections} connections, ${rounds} × ${seconds} s each`)
  console.log(formatTable(["server", "req/s (best)", "p50 ms", "p99 ms", "CPU µs/req", "req/s per round"], rows))
  const share = (name: string) => fixed((best(name).requestsPerSecond / best("raw").requestsPerSecond) * 100)
  console.log(`platform / raw node:http: ${share("platform")} % of the requests/s (goal ≥ 30 %); /health: ${share("platform /health")} %` +
    (base === undefined ? "" : `; ${base.label}: ${share(`platform at ${base.label}`)} %`))
  if (profiling) {
    for (const name of ["platform", "platform /health"]) {
      for (const result of results.get(name)!) printSelfTimes(`the platform on ${backend}: ${name}`, profileFile, root, result.window)
    }
  }
}

const main = async () => {
  ensureBuilt()
  const base = baseRevision === undefined ? undefined : checkoutOf(baseRevision)
  await measure("PGlite", async () => undefined, base)
  const postgres = postgresFromEnv()
  if (postgres === undefined) console.log(`\n${postgresNotSet}`)
  else await measure("PostgreSQL", async () => (await throwawayDatabase(postgres.url)).url, base)
}

const [mode, port, argument] = process.argv.slice(2)
if (mode === "baseline") baseline(Number(port), argument!)
else runScript(main)
