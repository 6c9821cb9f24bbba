// `npm run bench:jobs`: the job search's added latency over a direct call to
// the provider. Processes: a stub SerpApi-compatible provider, the built
// server (embedded PGlite) configured with it, and autocannon, each on its
// own. The same search is sent (a) straight to the stub and (b) through
// `GET /api/v0/web/jobs` (authentication, rate limit, a data-credit hold and
// its settlement, the provider call); the script prints p50/p99 at one
// connection and the rate at `BENCH_CONNECTIONS`, and (b) − (a).
import { createRequire } from "node:module"
import { runScript, spawnChild } from "./bench/children.ts"
import { runLoad } from "./bench/load.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer } from "./bench/report.ts"
import { ensureBuilt, root, startPlatform, tenantHeaders } from "./bench/servers.ts"

const settings = {
  connections: numberFromEnv("BENCH_CONNECTIONS", 50),
  durationSeconds: numberFromEnv("BENCH_DURATION", 10)
}

const runStub = async () => {
  const { startStubJobProvider } = await import("../test/support/StubJobProvider.ts")
  const stub = await startStubJobProvider()
  process.stdout.write(`${stub.url}\n`)
}

const startStub = async () => {
  const child = spawnChild(process.execPath, [createRequire(import.meta.url).resolve("./bench-jobs.ts"), "--stub"], {
    cwd: root,
    server: "the stub provider"
  })
  for (let waited = 0; !child.stdout().includes("\n"); waited += 10) {
    if (waited > 30_000 || child.hasExited()) throw new Error(`the stub provider did not start: ${child.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return { child, url: child.stdout().trim() }
}

const main = async () => {
  await ensureBuilt()
  const stub = await startStub()
  const platform = await startPlatform({ env: { SERPAPI_BASE_URL: stub.url, SERPAPI_API_KEY: "bench-key" } })
  // A tenant whose data credits outlast the run (the operator API sets the pool).
  const headers = await tenantHeaders(platform, { name: "Jobs benchmark", subscriptionType: "pro", dataCreditLimit: 100_000_000 })

  const direct = { url: `${stub.url}/search.json?q=barista&gl=us&hl=en_us&engine=google_jobs&api_key=bench-key`, headers: {}, serverPid: stub.child.pid }
  const viaPlatform = { url: `${platform.baseUrl}/api/v0/web/jobs?q=barista`, headers, serverPid: platform.child.pid }
  const rows: Array<Array<string>> = []
  for (const connections of [1, settings.connections]) {
    const a = await runLoad({ ...direct, connections, durationSeconds: settings.durationSeconds })
    const b = await runLoad({ ...viaPlatform, connections, durationSeconds: settings.durationSeconds })
    if (b.non2xx + b.errors > 0) throw new Error(`the platform answered ${JSON.stringify(b.statusCodes)} with ${b.errors} errors`)
    rows.push(
      [`${connections}`, "stub provider directly", integer(a.requestsPerSecond), fixed(a.p50Ms), fixed(a.p99Ms)],
      [`${connections}`, "GET /api/v0/web/jobs", integer(b.requestsPerSecond), fixed(b.p50Ms), fixed(b.p99Ms)],
      [`${connections}`, "added by the platform", "", fixed(b.p50Ms - a.p50Ms), fixed(b.p99Ms - a.p99Ms)]
    )
  }
  console.log(formatTable(["connections", "path", "req/s", "p50 ms", "p99 ms"], rows))
}

if (process.argv.includes("--stub")) void runStub()
else runScript(main)
