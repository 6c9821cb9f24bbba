// Child processes and temporary resources of the benchmark scripts: every one
// is registered for clean-up, which runs when the script ends, fails or is
// interrupted (Ctrl-C, SIGTERM).
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"

type Cleanup = () => Promise<void>

const cleanups: Array<Cleanup> = []
const live = new Set<ChildProcess>()

/** Registers a clean-up; the returned function runs it now (once) instead of at the end. */
export const deferCleanup = (cleanup: Cleanup): Cleanup => {
  let done = false
  const once = async () => {
    if (done) return
    done = true
    const index = cleanups.indexOf(once)
    if (index >= 0) cleanups.splice(index, 1)
    await cleanup()
  }
  cleanups.push(once)
  return once
}

/** Runs every pending clean-up, the latest registered first (servers stop before their database goes). */
const cleanupAll = async () => {
  while (cleanups.length > 0) {
    try {
      await cleanups[cleanups.length - 1]()
    } catch (error) {
      console.error(`clean-up failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** Runs a script's main function; whatever happens, every process it started is stopped. */
export const runScript = (main: () => Promise<void>) => {
  let interrupted = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return
    interrupted = true
    console.error(`\n${signal}: stopping every process this script started`)
    void cleanupAll().finally(() => process.exit(130))
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  // Last resort, should the script exit without its clean-ups having run.
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL")
  })
  main().then(cleanupAll, async (error: unknown) => {
    if (interrupted) return
    console.error(error instanceof Error ? error.message : String(error))
    process.exitCode = 1
    await cleanupAll()
  })
}

/** A temporary folder, removed at clean-up (after the processes started later have stopped). */
export const makeTempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  deferCleanup(async () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface Child {
  readonly pid: number
  /** `performance.now()` when the process was spawned. */
  readonly spawnedAt: number
  readonly stdout: () => string
  readonly stderr: () => string
  readonly hasExited: () => boolean
  /** Resolves with the exit code (or the signal's name) when the process has ended. */
  readonly exited: Promise<number | string>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  readonly stop: () => Promise<void>
}

const outputLimit = 4 * 1024 * 1024

/** Spawns a process with piped output, registered for clean-up. */
export const spawnChild = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    readonly env?: NodeJS.ProcessEnv
    readonly cwd?: string
    readonly graceMs?: number
    /** For a server: reported with its output's end should it exit before it is stopped. */
    readonly server?: string
  } = {}
): Child => {
  const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] })
  const spawnedAt = performance.now()
  if (child.pid === undefined) throw new Error(`cannot start ${command}`)
  live.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    if (stdout.length < outputLimit) stdout += chunk
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < outputLimit) stderr += chunk
  })
  let ended = false
  const exited = new Promise<number | string>((resolve) => {
    child.on("error", (error) => {
      stderr += `\n${error.message}`
    })
    child.on("close", (code, signal) => {
      ended = true
      live.delete(child)
      if (options.server !== undefined && !stopping) {
        // 130 is how the service exits on SIGINT/SIGTERM: something outside this script stopped it.
        const why = code === 130 ? "130: SIGINT or SIGTERM from outside this script" : String(code ?? signal)
        console.error(`${options.server} exited unexpectedly (${why}); its output ended with:\n` +
          `${stdout.slice(-4_000)}${stderr.slice(-4_000)}`)
      }
      resolve(code ?? signal ?? "unknown")
    })
  })
  const graceMs = options.graceMs ?? 15_000
  let stopping = false
  const stop = deferCleanup(async () => {
    stopping = true
    if (ended) return
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), graceMs)
    await exited
    clearTimeout(killer)
  })
  return {
    pid: child.pid,
    spawnedAt,
    stdout: () => stdout,
    stderr: () => stderr,
    hasExited: () => ended,
    exited,
    stop
  }
}

/** A TCP port that was free a moment ago on the loopback interface. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
    })
  })

export interface HttpAnswer {
  readonly status: number
  readonly body: string
}

/**
 * One HTTP request on its own connection (no pooled keep-alive socket outlives
 * a server), failing when no answer has come within `timeoutMs`.
 */
export const request = (
  url: string,
  options: {
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: unknown
    readonly timeoutMs?: number
  } = {}
) =>
  new Promise<HttpAnswer>((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
    const timeoutMs = options.timeoutMs ?? 30_000
    const req = httpRequest(url, {
      method: options.method ?? "GET",
      agent: false,
      headers: {
        ...options.headers,
        ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
      }
    }, (response) => {
      let body = ""
      response.setEncoding("utf8").on("data", (chunk: string) => body += chunk)
      response.on("end", () => {
        clearTimeout(timer)
        resolve({ status: response.statusCode ?? 0, body })
      })
    })
    const timer = setTimeout(() => req.destroy(new Error(`${options.method ?? "GET"} ${url}: no answer within ${timeoutMs} ms`)), timeoutMs)
    req.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    req.end(payload)
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `url` until it answers 200 and returns the milliseconds since the
 * child was spawned; fails with the child's output if it exits or times out.
 * Each attempt has its own short timeout, and the attempts that got no answer
 * at all are counted: a request that reaches the listener before the routes
 * are installed may never be answered.
 */
export const waitUntilReady = async (child: Child, url: string, timeoutMs = 60_000) => {
  const deadline = performance.now() + timeoutMs
  let unansweredProbes = 0
  for (;;) {
    const answer = await request(url, { timeoutMs: 1_000 }).catch((error: Error) => {
      if (error.message.includes("no answer within")) unansweredProbes++
      return undefined
    })
    if (answer?.status === 200) return { readyMs: performance.now() - child.spawnedAt, unansweredProbes }
    if (child.hasExited() || performance.now() > deadline) {
      const why = child.hasExited() ? `exited (${await child.exited})` : `did not answer 200 within ${timeoutMs} ms`
      throw new Error(`${url}: the process ${why}\n--- stdout\n${child.stdout()}\n--- stderr\n${child.stderr()}`)
    }
    await sleep(5)
  }
}
