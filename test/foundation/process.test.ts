import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { spawnSync } from "node:child_process"
import { afterAll, beforeAll } from "vitest"
import { freePort, root, start, waitForHealth } from "../support/ServerProcess.ts"

const dataDirs: Array<string> = []

afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-data-"))
  dataDirs.push(dir)
  return dir
}

// Each case boots Node and an empty embedded database, several times: generous limits for a busy CI machine.
describe("the server process", { timeout: 120_000 }, () => {
  it("bootstraps an empty embedded database once, refuses a second process on the folder, stops cleanly", async () => {
    const dataDir = newDataDir()
    const port = await freePort()
    const first = start({ DATA_DIR: dataDir, PORT: String(port) })
    expect(await waitForHealth(port, first)).toEqual({ status: "ok", storage: "pglite", migrationVersion: expect.any(Number) })
    const apiKey = /company API key:\s+(\S+)/.exec(first.output())?.[1]
    expect(apiKey).toMatch(/^plk_/)
    const me = await fetch(`http://127.0.0.1:${port}/api/v0/me`, { headers: { "x-api-key": apiKey! } })
    expect(me.status).toBe(200)
    expect(me.headers.get("x-request-id")).toMatch(/^req_/)

    const second = start({ DATA_DIR: dataDir, PORT: String(await freePort()) })
    expect(await second.exited).toBe(1)
    expect(second.output()).toContain(`Data folder ${dataDir} is in use by process ${first.child.pid}`)

    first.child.kill("SIGINT")
    await first.exited
    // Where e-mail goes is logged once, as is every optional provider.
    expect(first.output().match(/"E-mail: written as \.eml files to [^"]*outbox, not sent \(set SMTP_URL to deliver\)"/g)).toHaveLength(1)
    expect(first.output().match(/"Job search: off/g)).toHaveLength(1)
    expect(existsSync(join(dataDir, "platform-api.lock"))).toBe(false)
    const stopped = first.output().split("\n").filter((line) => line.includes("Stopped in"))
    expect(stopped).toEqual([expect.stringMatching(/waited for \d+ in-flight request\(s\).*closed the database/)])

    const restarted = start({ DATA_DIR: dataDir, PORT: String(port) })
    await waitForHealth(port, restarted)
    expect(restarted.output()).not.toContain("company API key")
    const again = await fetch(`http://127.0.0.1:${port}/api/v0/me`, { headers: { "x-api-key": apiKey! } })
    expect(again.status).toBe(200)
    restarted.child.kill("SIGTERM")
    await restarted.exited
  })

  it("exits non-zero with one clear line when the database is unreachable", async () => {
    const port = await freePort()
    const unreachable = start({ DATABASE_URL: `postgres://nobody@127.0.0.1:${await freePort()}/none`, PORT: String(port) })
    expect(await unreachable.exited).toBe(1)
    const lines = unreachable.output().trim().split("\n")
    expect(lines).toEqual([expect.stringMatching(/^platform-api: cannot start: .*connect/i)])
  })

  it("a taken port: one line naming the address, port and cause, and no first-start keys until a start succeeds", async () => {
    const dataDir = newDataDir()
    const taken = createServer()
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, "127.0.0.1", () => resolve((taken.address() as { port: number }).port))
    )
    try {
      const refused = start({ DATA_DIR: dataDir, PORT: String(port) })
      expect(await refused.exited).toBe(1)
      const lines = refused.output().trim().split("\n").filter((line) => !line.startsWith("{"))
      expect(lines).toEqual([`platform-api: cannot start: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process using it or set PORT`])
      expect(refused.output()).not.toMatch(/First start|plk_|pak_/)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
    // The refused start left no tenant behind: the next one creates it and shows its keys.
    const next = start({ DATA_DIR: dataDir, PORT: String(port) })
    await waitForHealth(port, next)
    expect(next.output()).toMatch(/company API key:\s+plk_/)
    next.child.kill("SIGTERM")
    await next.exited
  })

  describe("under `npm start`", () => {
    // `npm start` builds a stale dist/ first; built here, under its own limit, the case below times the start alone.
    beforeAll(() => {
      expect(spawnSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" }).status).toBe(0)
    }, 600_000)

    it("stops with `npm start` when a process manager sends SIGTERM to npm: no orphaned server", async () => {
      const dataDir = newDataDir()
      const port = await freePort()
      const npm = start({ DATA_DIR: dataDir, PORT: String(port) }, "npm", ["start", "--silent"])
      await waitForHealth(port, npm)
      npm.child.kill("SIGTERM")
      await npm.exited
      // the server itself stopped: the port answers nothing and the data folder is free
      expect(await fetch(`http://127.0.0.1:${port}/health`).then(() => "answered", () => "refused")).toBe("refused")
      expect(existsSync(join(dataDir, "platform-api.lock"))).toBe(false)
      // The signal may come while the background workers are still starting (`/health` answers before them).
      expect(npm.output()).toMatch(/Stopped (in \d+ ms|while starting)/)
    })
  })
})
