// The processes a benchmark measures: the built Platform API and a raw
// `node:http` baseline, each in its own process, plus what /proc says about them.
import { randomBytes } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { builtMain, ensureBuilt, root, startOptionsOf } from "../build.ts"
import { type Child, freePort, makeTempDir, request, spawnChild, waitUntilReady } from "./children.ts"

export { ensureBuilt, root }

export interface Server {
  readonly child: Child
  readonly baseUrl: string
  /** Milliseconds from spawn until the readiness URL answered 200. */
  readonly readyMs: number
  /** Readiness probes the server accepted but never answered. */
  readonly unansweredProbes: number
}

export interface PlatformServer extends Server {
  readonly adminKey: string
}

export interface PlatformOptions {
  /** PostgreSQL; without it the embedded database in `dataDir` (a fresh temporary folder if not given). */
  readonly databaseUrl?: string
  readonly dataDir?: string
  /** Node options placed before `dist/main.js` after those of `npm start`, e.g. `--cpu-prof`. */
  readonly nodeArgs?: ReadonlyArray<string>
  /** Further settings, e.g. a provider's URL. */
  readonly env?: Readonly<Record<string, string>>
  /** Another built checkout's server (`scripts/bench/revisions.ts`) in place of this one's `dist/main.js`, with its start options. */
  readonly checkout?: { readonly root: string; readonly main: string; readonly nodeOptions: ReadonlyArray<string> }
}

/** `node dist/main.js` on a free port, with the admin API on and rate limiting out of the way. */
export const startPlatform = async (options: PlatformOptions = {}): Promise<PlatformServer> => {
  const port = await freePort()
  const adminKey = randomBytes(32).toString("hex")
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: options.dataDir ?? makeTempDir("platform-bench-data-"),
    BOOTSTRAP: "on",
    ADMIN_API_KEY: adminKey,
    RATE_LIMIT_PER_MINUTE: String(1_000_000_000),
    LOG_LEVEL: "Warn",
    ...options.env
  }
  delete env.DATABASE_URL
  if (options.databaseUrl !== undefined) env.DATABASE_URL = options.databaseUrl
  const child = spawnChild(process.execPath, [...(options.checkout?.nodeOptions ?? startOptionsOf(root)), ...(options.nodeArgs ?? []), options.checkout?.main ?? builtMain], {
    env,
    cwd: options.checkout?.root ?? root,
    server: `the platform server on ${options.databaseUrl === undefined ? "PGlite" : "PostgreSQL"}`
  })
  const baseUrl = `http://127.0.0.1:${port}`
  return { child, baseUrl, adminKey, ...(await waitUntilReady(child, `${baseUrl}/health`)) }
}

/** The raw `node:http` server answering a small JSON document on every path. */
export const startBaseline = async (): Promise<Server> => {
  const port = await freePort()
  const child = spawnChild(process.execPath, [join(root, "scripts/bench/baseline-server.ts")], {
    env: { ...process.env, PORT: String(port) },
    server: "the baseline server"
  })
  const baseUrl = `http://127.0.0.1:${port}`
  return { child, baseUrl, ...(await waitUntilReady(child, `${baseUrl}/`)) }
}

export interface Tenant {
  readonly organizationId: string
  readonly companyId: string
  readonly userId: string
  readonly apiKey: string
  readonly personalAccessKey: string
}

/** Where a server's operator API is, and its key. */
export type OperatorApi = Pick<PlatformServer, "baseUrl" | "adminKey">

/** One POST to the operator API, which must answer 201. */
export const adminCall = async (server: OperatorApi, path: string, body: unknown) => {
  const answer = await request(`${server.baseUrl}/api/v0/admin${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminKey}` },
    body
  })
  if (answer.status !== 201) throw new Error(`POST /api/v0/admin${path} answered ${answer.status}: ${answer.body}`)
  return JSON.parse(answer.body) as Record<string, unknown>
}

/**
 * A tenant through the admin API (the same call on both backends): an
 * organization, a company, its owner with both key kinds, and `extraUsers`
 * more members so that list endpoints return a full page.
 */
export const seedTenant = async (server: PlatformServer, extraUsers: number): Promise<Tenant> => {
  const tag = randomBytes(4).toString("hex")
  const tenant = await adminCall(server, "/bootstrap", {
    organization: `Benchmark organization ${tag}`,
    company: `Benchmark company ${tag}`,
    email: `owner-${tag}@bench.example`
  }) as unknown as Tenant
  for (let index = 0; index < extraUsers; index++) {
    const user = await adminCall(server, "/users", { email: `member-${index}-${tag}@bench.example`, displayName: `Member ${index}` })
    await adminCall(server, `/companies/${tenant.companyId}/users`, { userId: user.id, role: "member" })
  }
  return tenant
}

/**
 * A tenant through the operator API: the organization `organization`
 * describes (its name, plan and credit pools), a company, and its owner's
 * personal access key, answered as request headers.
 */
export const tenantHeaders = async (server: OperatorApi, organization: { readonly name: string } & Record<string, unknown>) => {
  const created = await adminCall(server, "/organizations", organization)
  const owner = await adminCall(server, "/users", { email: "owner@bench.example" })
  const company = await adminCall(server, "/companies", { organizationId: created.id, name: organization.name })
  await adminCall(server, `/companies/${company.id}/users`, { userId: owner.id, role: "owner" })
  const key = await adminCall(server, `/users/${owner.id}/personal-access-keys`, { name: "bench" })
  return { authorization: `Bearer ${key.key}`, "x-company-id": String(company.id) }
}

/** Peak (VmHWM) and current (VmRSS) resident memory in MiB; undefined where /proc is not available. */
export const memoryOf = (pid: number) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const mebibytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024
    return { peakRssMb: mebibytes("VmHWM"), rssMb: mebibytes("VmRSS") }
  } catch {
    return undefined
  }
}

/**
 * CPU seconds used so far by every process of this machine named `name` (e.g. `postgres`: a local PostgreSQL's
 * server and backends); 0 when there is none or no /proc. A process that ended meanwhile takes its share with it.
 */
export const cpuSecondsOfAll = (name: string) => {
  let seconds = 0
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== name) continue
    } catch {
      continue
    }
    seconds += cpuSecondsOf(Number(entry)) ?? 0
  }
  return seconds
}

/** CPU seconds (user + system) a process has used so far; undefined where /proc is not available. */
export const cpuSecondsOf = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // After "pid (name) ", utime and stime are the 12th and 13th fields, in clock ticks (100 a second on Linux).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}
