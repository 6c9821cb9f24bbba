import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"

/**
 * The server as a process, for tests of how it starts, stops and dies: runs
 * `src/main.ts` with Node's type stripping, as `npm start` runs the build.
 */
export const root = join(import.meta.dirname, "..", "..")
export const main = join(root, "src", "main.ts")

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export interface Started {
  readonly child: ChildProcess
  readonly output: () => string
  /** Settles when the process has exited and every holder of its output pipes (a child it spawned too) closed them. */
  readonly exited: Promise<number | null>
}

export const start = (env: Record<string, string>, command = process.execPath, args = [main]): Started => {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, LOG_LEVEL: "Info", ...env }, stdio: "pipe" })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

export const waitForHealth = async (port: number, started: Started) => {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (started.child.exitCode !== null) throw new Error(`server exited: ${started.output()}`)
    const response = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined)
    if (response?.ok) return response.json()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`server did not become healthy: ${started.output()}`)
}
