import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll } from "vitest"
import { freePort, type Started, start, waitForHealth } from "../../support/ServerProcess.ts"
import { createPostgresDatabase, postgresUrl } from "../../support/TestServer.ts"
import { startReceiver, verified } from "../../support/WebhookTest.ts"

const adminKey = "kill-test-admin-key"
const leaseMs = 2_000
const folders: Array<string> = []
const databases = Scope.makeUnsafe()

afterAll(async () => {
  folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }))
  await Effect.runPromise(Scope.close(databases, Exit.void))
})

/** Where the server processes keep their data: one embedded data folder, or one PostgreSQL database they share. */
const storages: ReadonlyArray<{ readonly name: string; readonly env: () => Promise<Record<string, string>> }> = [
  {
    name: "pglite",
    env: async () => {
      const folder = mkdtempSync(join(tmpdir(), "webhooks-kill-"))
      folders.push(folder)
      return { DATA_DIR: folder }
    }
  },
  ...(postgresUrl === undefined ? [] : [{
    name: "postgres",
    // The database is dropped when the file ends.
    env: async () => ({ DATABASE_URL: await Effect.runPromise(Scope.provide(databases)(createPostgresDatabase)) })
  }])
]

/** A server process over `env`'s storage whose webhook worker polls often and leases briefly. */
const server = async (env: Record<string, string>) => {
  const port = await freePort()
  const started = start({
    ...env,
    PORT: String(port),
    BOOTSTRAP: "off",
    ADMIN_API_KEY: adminKey,
    OUTBOUND_ALLOWED_HOSTS: "127.0.0.1",
    WEBHOOKS_POLL_MS: "50",
    WEBHOOKS_LEASE_MS: String(leaseMs)
  })
  await waitForHealth(port, started)
  // Test plumbing over the JSON API: the answers are read as the test expects them.
  const call = async (method: string, path: string, key: string, body?: unknown): Promise<any> => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v0${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const answer = await response.json()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  return { started, call }
}

const killed = async (process: Started) => {
  process.child.kill("SIGKILL")
  return process.exited
}

const eventually = async (check: () => boolean, what: string, ms = 60_000) => {
  for (const deadline = Date.now() + ms; !check(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`)
  }
}

// Each case boots the server twice: generous limits for a busy machine.
describe.each(storages)("a server process killed mid-delivery on $name", { timeout: 180_000 }, ({ env }) => {
  it("leaves the delivery to the next process once its lease expires: delivered once, recorded once", async () => {
    const receiver = await startReceiver()
    try {
      // The first attempt reaches the receiver, which holds it unanswered; its process dies before any answer.
      receiver.reply = (_, index) => (index === 0 ? "hold" : 200)
      const storage = await env()
      const first = await server(storage)
      const tenant = await first.call("POST", "/admin/bootstrap", adminKey, {
        organization: "Kill test", company: "Kill test", email: "kill-test@example.com"
      })
      const hook = await first.call("POST", "/webhooks", tenant.apiKey, { url: receiver.url, events: ["task.run_completed"] })
      const queued = await first.call("POST", `/webhooks/${hook.id}/test`, tenant.apiKey)
      await receiver.arrived(1)
      expect(await killed(first.started)).toBe(null)

      const second = await server(storage)
      await eventually(() => receiver.received.length >= 2, "the next process delivered")
      const log = async () => (await second.call("GET", `/webhooks/${hook.id}/deliveries`, tenant.apiKey)).items
      for (let tries = 0; (await log())[0].status !== "delivered" && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const deliveries = await log()
      expect(deliveries).toEqual([expect.objectContaining({ id: queued.id, status: "delivered", attempts: 2, responseStatus: 200 })])
      // Both attempts carried the same signed webhook-id: a receiver keeps the event once.
      expect(receiver.received.map((request) => request.headers["webhook-id"])).toEqual([queued.eventId, queued.eventId])
      for (const request of receiver.received) expect(verified(hook.secret, request)).toMatchObject({ type: "webhook.test" })
      // Nothing more comes: delivered once, recorded once.
      await new Promise((resolve) => setTimeout(resolve, leaseMs + 500))
      expect(receiver.received).toHaveLength(2)
      second.started.child.kill("SIGTERM")
      await second.started.exited
    } finally {
      await receiver.close()
    }
  })
})
