import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { emit } from "../../src/storage/Outbox.ts"
import { DeliveryWorker } from "../../src/webhooks/DeliveryWorker.ts"
import { freePort, start } from "../support/ServerProcess.ts"
import { client, createPostgresDatabase, postgresStorageAt, postgresUrl, seedTenant } from "../support/TestServer.ts"
import { receiver, verified, webhookTestServer } from "../support/WebhookTest.ts"

/** The throwaway database the test server and the worker process share. */
class DatabaseUrl extends Context.Service<DatabaseUrl, string>()("test/DatabaseUrl") {}

const leaseMs = 2_000

/** The test server over a fresh PostgreSQL database, and that database's URL for a second process. */
const sharedDatabase = Layer.unwrap(Effect.map(createPostgresDatabase, (url) =>
  Layer.merge(webhookTestServer(postgresStorageAt(url), { leaseMs }), Layer.succeed(DatabaseUrl, url))))

/** The workers read time from the test clock: set it to the real time, which the worker process's leases use. */
const atRealTime = Effect.suspend(() => TestClock.setTime(Date.now()))

const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Effect.promise(() =>
    Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms))])
  )

// Several processes share a database only on PostgreSQL (an embedded database belongs to one process).
describe.each(postgresUrl === undefined ? [] : ["postgres"])("a webhook worker process killed mid-delivery on %s", () => {
  it.layer(sharedDatabase, { timeout: 120_000 })((it) => {
    it.effect("leaves the delivery to the next worker once its lease expires: delivered once, recorded once", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const endpoint = yield* receiver
        // The first attempt reaches the receiver, which holds it unanswered; the worker dies before any answer.
        endpoint.reply = (_, index) => (index === 0 ? "hold" : 200)
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["task.run_completed"] } })
        const params = { webhookId: hook.id }

        const worker = start({
          DATABASE_URL: yield* DatabaseUrl,
          PORT: String(yield* Effect.promise(freePort)),
          BOOTSTRAP: "off",
          OUTBOUND_ALLOWED_HOSTS: "127.0.0.1",
          WEBHOOKS_POLL_MS: "50",
          WEBHOOKS_LEASE_MS: String(leaseMs)
        })
        yield* emit(tenant.companyId, "task.run_completed", { taskId: "tsk_1", executionId: "exe_1", status: "succeeded" })
        yield* within(endpoint.arrived(1), 60_000, `the worker process did not deliver: ${worker.output()}`)
        worker.child.kill("SIGKILL")
        expect(yield* Effect.promise(() => worker.exited)).toBe(null)

        const [inFlight] = (yield* api.webhooks.listDeliveries({ params, query: {} })).items
        expect(inFlight).toMatchObject({ status: "pending", attempts: 1, responseStatus: null })
        // While the dead process's lease holds, no other worker attempts the delivery.
        const survivor = yield* DeliveryWorker
        yield* atRealTime
        expect(yield* survivor.runDue).toBe(0)
        expect(endpoint.received).toHaveLength(1)

        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, leaseMs + 200)))
        yield* atRealTime
        expect(yield* survivor.runDue).toBe(1)
        expect(endpoint.received).toHaveLength(2)
        // Both attempts carried the same signed webhook-id: a receiver keeps the event once.
        const ids = endpoint.received.map((request) => request.headers["webhook-id"])
        expect(new Set(ids).size).toBe(1)
        for (const request of endpoint.received) {
          expect(verified(hook.secret, request)).toMatchObject({ type: "task.run_completed", data: { taskId: "tsk_1" } })
        }
        const log = yield* api.webhooks.listDeliveries({ params, query: {} })
        expect(log.total).toBe(1)
        expect(log.items[0]).toMatchObject({ eventId: ids[0], status: "delivered", attempts: 2, responseStatus: 200 })
        expect(yield* survivor.runDue).toBe(0)
        expect(endpoint.received).toHaveLength(2)
      }))
  })
})
