import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { emit } from "../../../src/storage/Outbox.ts"
import { DeliveryWorker } from "../../../src/integrations/webhooks/DeliveryWorker.ts"
import { webhooksDefaults } from "../../../src/integrations/webhooks/WebhooksConfig.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"
import { drain, receiver, verified, webhookTestServer } from "../../support/WebhookTest.ts"

const hour = 3_600_000

describe.each(backends)("webhook retries on $name", ({ storage }) => {
  it.layer(webhookTestServer(storage))((it) => {
    it.effect("back off exponentially with jitter for about a day, then fail and turn the webhook off with the reason", () =>
      Effect.gen(function*() {
        const start = Date.now()
        yield* TestClock.setTime(start)
        const endpoint = yield* receiver
        endpoint.reply = () => 503
        const worker = yield* DeliveryWorker
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["document.ready"] } })
        const params = { webhookId: hook.id }
        yield* emit(tenant.companyId, "document.ready", { documentId: "doc_1" })

        const waits: Array<number> = []
        for (let attempt = 1; attempt <= webhooksDefaults.maxAttempts; attempt++) {
          yield* drain(worker)
          expect(endpoint.received).toHaveLength(attempt)
          const [delivery] = (yield* api.webhooks.listDeliveries({ params, query: {} })).items
          expect(delivery).toMatchObject({ attempts: attempt, responseStatus: 503, responseExcerpt: "no: 503", error: "The receiver answered 503" })
          if (attempt === webhooksDefaults.maxAttempts) {
            expect(delivery).toMatchObject({ status: "failed", nextAttemptAt: null })
            break
          }
          expect(delivery!.status).toBe("pending")
          const now = yield* Clock.currentTimeMillis
          const wait = delivery!.nextAttemptAt! - now
          const nominal = Math.min(webhooksDefaults.retryBaseMs * 2 ** (attempt - 1), webhooksDefaults.retryMaxMs)
          expect(wait).toBeGreaterThanOrEqual(nominal * 0.8)
          expect(wait).toBeLessThanOrEqual(nominal * 1.2)
          waits.push(wait)
          // Not a moment early.
          yield* TestClock.adjust(wait - 1)
          expect(yield* drain(worker)).toBe(0)
          yield* TestClock.adjust(1)
        }
        const total = waits.reduce((sum, wait) => sum + wait, 0)
        expect(total).toBeGreaterThan(20 * hour)
        expect(total).toBeLessThan(30 * hour)
        // Every attempt carried the same webhook-id, so the receiver can tell them apart from new events.
        expect(new Set(endpoint.received.map((request) => request.headers["webhook-id"])).size).toBe(1)

        const off = yield* api.webhooks.get({ params })
        expect(off.enabled).toBe(false)
        expect(off.disabledReason).toMatch(/failed 13 times over about a day \(last: status 503\)/)
        // Off: new events make no deliveries.
        yield* emit(tenant.companyId, "document.ready", { documentId: "doc_2" })
        yield* drain(worker)
        expect((yield* api.webhooks.listDeliveries({ params, query: {} })).total).toBe(1)

        // Turned on again and retried by hand, the failed delivery goes through.
        expect(yield* api.webhooks.update({ params, payload: { enabled: true } })).toMatchObject({ enabled: true, disabledReason: null })
        endpoint.reply = () => 204
        const [failed] = (yield* api.webhooks.listDeliveries({ params, query: { status: "failed" } })).items
        expect(yield* api.webhooks.retryDelivery({ params: { ...params, deliveryId: failed!.id } })).toMatchObject({ status: "pending" })
        yield* drain(worker)
        expect(yield* api.webhooks.listDeliveries({ params, query: {} })).toMatchObject({
          total: 1,
          items: [{ id: failed!.id, status: "delivered", attempts: 14, responseStatus: 204, error: null }]
        })
      }))

    it.effect("keep a webhook that still receives other deliveries on when one delivery fails for good", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        endpoint.reply = (request) => (JSON.parse(request.body).data.poison === true ? 400 : 200)
        const worker = yield* DeliveryWorker
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"] } })
        yield* emit(tenant.companyId, "lead.created", { poison: true })
        for (let attempt = 1; attempt <= webhooksDefaults.maxAttempts; attempt++) {
          yield* emit(tenant.companyId, "lead.created", { attempt })
          yield* drain(worker)
          yield* TestClock.adjust(webhooksDefaults.retryMaxMs * 1.2)
        }
        const log = yield* api.webhooks.listDeliveries({ params: { webhookId: hook.id }, query: { status: "failed" } })
        expect(log.items.map((item) => [item.attempts, item.responseStatus])).toEqual([[13, 400]])
        expect(yield* api.webhooks.get({ params: { webhookId: hook.id } })).toMatchObject({ enabled: true, disabledReason: null })
      }))

    it.effect("two workers racing deliver every event exactly once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["recipient.opened"] } })
        yield* Effect.forEach(Array.from({ length: 60 }, (_, index) => index), (index) =>
          emit(tenant.companyId, "recipient.opened", { index }), { discard: true })

        const first = yield* DeliveryWorker
        const second = yield* Effect.provide(DeliveryWorker.use(Effect.succeed), DeliveryWorker.layer, { local: true })
        expect(second).not.toBe(first)
        yield* Effect.all([drain(first), drain(second)], { concurrency: 2 })

        expect(endpoint.received).toHaveLength(60)
        const indexes = endpoint.received.map((request) => (verified(hook.secret, request) as { data: { index: number } }).data.index)
        expect(indexes.toSorted((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, index) => index))
        const log = yield* api.webhooks.listDeliveries({ params: { webhookId: hook.id }, query: { status: "delivered", pageSize: 100 } })
        expect(log.total).toBe(60)
        expect(log.items.every((item) => item.attempts === 1)).toBe(true)
      }))
  })
})
