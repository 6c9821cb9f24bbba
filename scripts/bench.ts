// `npm run bench`: requests/s and latency of representative endpoints of the
// built service, on the embedded database and (when a PostgreSQL URL is set)
// on PostgreSQL, next to a raw `node:http` baseline measured in the same run,
// right before each backend's endpoints.
// Every server and the load generator run in their own processes.
// docs/benchmarks.md explains the settings and how to read the results.
import { existsSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { printSelfTimes } from "./bench/cpu-profile.ts"
import { request, runScript } from "./bench/children.ts"
import { type LoadResult, runLoad } from "./bench/load.ts"
import { postgresFromEnv, postgresNotSet, throwawayDatabase } from "./bench/databases.ts"
import { flagFromEnv, listFromEnv, numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, resultsDir, writeResults } from "./bench/report.ts"
import { typicalHtmlEmail } from "../test/support/Emails.ts"
import { ensureBuilt, memoryOf, root, seedTenant, type Server, startBaseline, startPlatform, type Tenant } from "./bench/servers.ts"

const settings = {
  connections: numberFromEnv("BENCH_CONNECTIONS", 50),
  durationSeconds: numberFromEnv("BENCH_DURATION", 10),
  warmupSeconds: numberFromEnv("BENCH_WARMUP", 3),
  profile: flagFromEnv("BENCH_PROFILE"),
  /** Endpoint names to measure (`health,me,organizations,company_users`); all when unset. */
  endpoints: listFromEnv("BENCH_ENDPOINTS")
}

/** Company users added to the benchmark tenant, so that list endpoints answer a full page. */
const seededMembers = 30
const p99TargetMs = 25

type Backend = "pglite" | "postgres"
type Kind = "baseline" | "health" | "auth" | "storage" | "content"

interface Endpoint {
  readonly name: string
  readonly kind: Kind
  readonly label: string
  readonly path: string
  readonly headers: Record<string, string>
  /** A JSON body, sent with POST; GET without one. */
  readonly body?: unknown
}

const baselineEndpoint: Endpoint = { name: "baseline", kind: "baseline", label: "GET / (raw node:http)", path: "/", headers: {} }

const endpointsOf = (tenant: Tenant): ReadonlyArray<Endpoint> => {
  const personalKey = { "x-api-key": tenant.personalAccessKey, "x-company-id": tenant.companyId }
  return [
    { name: "health", kind: "health", label: "GET /health", path: "/health", headers: {} },
    { name: "me", kind: "auth", label: "GET /api/v0/me", path: "/api/v0/me", headers: { "x-api-key": tenant.apiKey } },
    {
      name: "organizations",
      kind: "storage",
      label: "GET /api/v0/organizations",
      path: "/api/v0/organizations",
      headers: personalKey
    },
    {
      name: "company_users",
      kind: "storage",
      label: "GET /api/v0/company_users/{companyId}",
      path: `/api/v0/company_users/${tenant.companyId}`,
      headers: personalKey
    },
    contentEndpoint("spam_check", "spam-check", tenant),
    contentEndpoint("spintax", "spintax", tenant)
  ]
}

/** A content tool on a typical ~2 KB HTML cold e-mail (CPU-bound, no storage). */
const contentEndpoint = (name: string, tool: string, tenant: Tenant): Endpoint => ({
  name,
  kind: "content",
  label: `POST /api/v0/content/${tool} (2 KB HTML)`,
  path: `/api/v0/content/${tool}`,
  headers: { "x-api-key": tenant.apiKey },
  body: { content: typicalHtmlEmail, subject: "Interview reviews for {{company}}" }
})

/** Minimum throughput as a share of the baseline's, by kind of endpoint and backend. */
const minimumRatio = (kind: Kind, backend: Backend): number | undefined =>
  kind === "auth" ? 0.45 : kind === "storage" ? (backend === "postgres" ? 0.25 : 0.10) : undefined

interface Target {
  readonly label: string
  readonly met: boolean
}

interface Row {
  readonly backend: Backend | "node:http"
  readonly endpoint: string
  readonly kind: Kind
  readonly skipped?: string
  readonly load?: LoadResult
  /** Requests/s as a share of the baseline's. */
  readonly ratio?: number
  /** The baseline's server CPU time per request as a share of this endpoint's. */
  readonly cpuRatio?: number
  readonly targets: ReadonlyArray<Target>
}

const judge = (backend: Backend, kind: Kind, load: LoadResult, ratio: number): Array<Target> => {
  // Throughput of error answers proves nothing: a run with any is a miss.
  const clean = load.non2xx + load.errors + load.timeouts === 0
  const targets: Array<Target> = []
  const minimum = minimumRatio(kind, backend)
  if (minimum !== undefined) targets.push({ label: `≥ ${minimum * 100}% of baseline`, met: clean && ratio >= minimum })
  targets.push({ label: `p99 < ${p99TargetMs} ms`, met: clean && load.p99Ms < p99TargetMs })
  return targets
}

/** Checks the endpoint answers 200, warms it up, then loads it. */
const measure = async (backend: Row["backend"], endpoint: Endpoint, server: Server, baseline?: LoadResult): Promise<Row> => {
  const url = `${server.baseUrl}${endpoint.path}`
  const row = { backend, endpoint: endpoint.label, kind: endpoint.kind }
  const method = endpoint.body === undefined ? "GET" : "POST"
  const probe = await request(url, { method, headers: endpoint.headers, body: endpoint.body })
  if (probe.status !== 200) {
    const skipped = `skipped: endpoint answered ${probe.status} ${probe.body.slice(0, 160)}`
    // A missing endpoint may simply not be built yet; any other answer is a failure.
    return { ...row, skipped, targets: probe.status === 404 ? [] : [{ label: "answers 200", met: false }] }
  }
  const load = { url, headers: endpoint.headers, body: endpoint.body, connections: settings.connections, serverPid: server.child.pid }
  process.stderr.write(`${backend} ${endpoint.label}: ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured\n`)
  if (settings.warmupSeconds > 0) await runLoad({ ...load, durationSeconds: settings.warmupSeconds })
  const result = await runLoad({ ...load, durationSeconds: settings.durationSeconds })
  if (baseline === undefined || backend === "node:http") return { ...row, load: result, ratio: 1, cpuRatio: 1, targets: [] }
  const ratio = result.requestsPerSecond / baseline.requestsPerSecond
  const cpuRatio = baseline.serverCpuMicrosPerRequest === undefined || result.serverCpuMicrosPerRequest === undefined
    ? undefined
    : baseline.serverCpuMicrosPerRequest / result.serverCpuMicrosPerRequest
  return { ...row, load: result, ratio, cpuRatio, targets: judge(backend, endpoint.kind, result, ratio) }
}

const tableOf = (rows: ReadonlyArray<Row>) =>
  formatTable(
    ["backend", "endpoint", "req/s", "p50 ms", "p99 ms", "vs baseline", "server CPU", "CPU µs/req", "CPU vs baseline", "non-2xx", "errors", "targets"],
    rows.map((row) => {
      const load = row.load
      const targets = row.targets.map((target) => `${target.label}: ${target.met ? "met" : "MISSED"}`).join("; ")
      if (load === undefined) {
        return [row.backend, row.endpoint, ...Array(9).fill("-"), [row.skipped, targets].filter(Boolean).join("; ")]
      }
      return [
        row.backend,
        row.endpoint,
        integer(load.requestsPerSecond),
        String(load.p50Ms),
        String(load.p99Ms),
        row.ratio === undefined ? "-" : `${fixed(100 * row.ratio)}%`,
        load.serverCpuPercent === undefined ? "-" : `${integer(load.serverCpuPercent)}%`,
        load.serverCpuMicrosPerRequest === undefined ? "-" : fixed(load.serverCpuMicrosPerRequest),
        row.cpuRatio === undefined ? "-" : `${fixed(100 * row.cpuRatio)}%`,
        load.non2xx === 0 ? "0" : `${integer(load.non2xx)} (${fixed((100 * load.non2xx) / load.requests)}%)`,
        integer(load.errors + load.timeouts),
        targets
      ]
    })
  )

/** The profile's top functions and packages while each endpoint of `rows` was under measured load. */
const printProfile = (file: string, rows: ReadonlyArray<Row>) =>
  rows.flatMap((row) =>
    row.load === undefined ? [] : [{
      backend: row.backend,
      endpoint: row.endpoint,
      file,
      ...printSelfTimes(`the ${row.backend} server under ${row.endpoint}`, file, root, row.load.window)
    }]
  )

runScript(async () => {
  const startedAt = new Date()
  const loadBefore = loadavg()[0]
  const stamp = startedAt.toISOString().replace(/[:.]/g, "-")
  const postgres = postgresFromEnv()
  const wanted = (endpoint: Endpoint) => settings.endpoints === undefined || settings.endpoints.includes(endpoint.name)
  ensureBuilt()

  const baselineServer = await startBaseline()
  const rows: Array<Row> = []

  const backends: Array<Backend> = postgres === undefined ? ["pglite"] : ["pglite", "postgres"]
  const servers = []
  const profiles = []
  const profileDir = join(resultsDir, "profiles")
  for (const backend of backends) {
    const profileName = `${backend}-${stamp}.cpuprofile`
    const profileFile = join(profileDir, profileName)
    const nodeArgs = settings.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profileName}`] : []
    const databaseUrl = backend === "postgres" && postgres !== undefined ? (await throwawayDatabase(postgres.url)).url : undefined
    const server = await startPlatform({ databaseUrl, nodeArgs })
    const tenant = await seedTenant(server, seededMembers)
    // Measured right before the backend's endpoints, so that both see the machine alike.
    const baseline = await measure("node:http", baselineEndpoint, baselineServer)
    if (baseline.load === undefined) throw new Error(`the baseline server did not answer 200: ${baseline.skipped}`)
    const measured: Array<Row> = []
    for (const endpoint of endpointsOf(tenant).filter(wanted)) {
      measured.push(await measure(backend, endpoint, server, baseline.load))
    }
    rows.push(baseline, ...measured)
    servers.push({
      backend,
      readyMs: server.readyMs,
      unansweredProbes: server.unansweredProbes,
      memoryAfterLoad: memoryOf(server.child.pid)
    })
    await server.child.stop()
    if (settings.profile) {
      if (!existsSync(profileFile)) throw new Error(`no CPU profile was written to ${profileFile}`)
      profiles.push(...printProfile(profileFile, measured))
    }
  }

  console.log(
    `\nPlatform API benchmark: ${settings.connections} connections, ${settings.durationSeconds} s per endpoint after ` +
      `${settings.warmupSeconds} s warm-up; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "CPU"}`
  )
  console.log(postgres === undefined
    ? postgresNotSet
    : `PostgreSQL: a throwaway database on the server of ${postgres.source}`)
  console.log(`load average before the run: ${fixed(loadBefore, 2)} on ${cpus().length} CPUs` +
    (loadBefore > cpus().length / 2 ? ": other processes were busy, the figures are likely low and noisy" : ""))
  console.log(tableOf(rows))
  for (const server of servers) {
    const memory = server.memoryAfterLoad
    console.log(`${server.backend} server: ready in ${integer(server.readyMs)} ms` +
      (memory === undefined ? "" : `, peak RSS ${integer(memory.peakRssMb)} MiB, RSS after the load ${integer(memory.rssMb)} MiB`) +
      (server.unansweredProbes === 0 ? "" : `; ${server.unansweredProbes} /health probe(s) during start-up were never answered`))
  }
  const targets = rows.flatMap((row) => row.targets)
  const skipped = rows.filter((row) => row.skipped !== undefined).length
  console.log(`targets: ${targets.filter((target) => target.met).length} met, ${targets.filter((target) => !target.met).length} missed` +
    (skipped === 0 ? "" : `; ${skipped} endpoint(s) skipped`))
  const file = writeResults("api", startedAt, {
    startedAt: startedAt.toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    settings: { ...settings, seededMembers, p99TargetMs },
    postgresSource: postgres?.source ?? null,
    loadAverageBefore: loadBefore,
    rows,
    servers,
    profiles
  })
  console.log(`results: ${file}`)
})
