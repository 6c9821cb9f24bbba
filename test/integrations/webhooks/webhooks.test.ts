import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql"
import { emit } from "../../../src/storage/Outbox.ts"
import { DeliveryWorker } from "../../../src/integrations/webhooks/DeliveryWorker.ts"
import { HttpClientRequest } from "effect/http"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant } from "../../support/TestServer.ts"
import { drain, receiver, verified, webhookTestServer } from "../../support/WebhookTest.ts"

/** The test clock at the real time, so that receivers accept the signatures' timestamps. */
const atRealTime = Effect.suspend(() => TestClock.setTime(Date.now()))

describe.each(backends)("webhooks on $name", ({ storage }) => {
  it.layer(webhookTestServer(storage))((it) => {
    it.effect("are created with their secret shown once, read, changed and deleted within their company", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const created = yield* api.webhooks.create({
          payload: { url: "https://hooks.example.com/in", events: ["lead.created", "recipient.opened", "lead.created"], description: "CRM" }
        })
        expect(created).toMatchObject({
          url: "https://hooks.example.com/in",
          events: ["lead.created", "recipient.opened"],
          description: "CRM",
          enabled: true,
          disabledReason: null
        })
        expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        const params = { webhookId: created.id }
        const read = yield* api.webhooks.get({ params })
        expect(read).not.toHaveProperty("secret")
        expect((yield* api.webhooks.list({ query: {} })).items.map((item) => [item.id, "secret" in item])).toEqual([[created.id, false]])

        const changed = yield* api.webhooks.update({ params, payload: { events: ["campaign.sent"], description: null, enabled: false } })
        expect(changed).toMatchObject({ events: ["campaign.sent"], description: null, enabled: false })

        const other = yield* seedTenant("other")
        const stranger = yield* client({ apiKey: other.apiKey })
        yield* failsWith(stranger.webhooks.get({ params }), "NotFound", `Webhook ${created.id} not found`)
        yield* failsWith(stranger.webhooks.delete({ params }), "NotFound")
        yield* failsWith(stranger.webhooks.listDeliveries({ params, query: {} }), "NotFound")
        yield* failsWith(stranger.webhooks.test({ params }), "NotFound")

        expect((yield* api.webhooks.delete({ params })).id).toBe(created.id)
        yield* failsWith(api.webhooks.get({ params }), "NotFound")
      }))

    it.effect("refuse URLs the outbound guard refuses, and bad events, with 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const refused = (url: string, message: RegExp) =>
          failsWith(api.webhooks.create({ payload: { url, events: ["lead.created"] } }), "BadRequest", message)
        yield* refused("http://10.1.2.3/hook", /10\.1\.2\.3 is an internal address \(private\)/)
        yield* refused("http://169.254.169.254/latest/meta-data", /169\.254\.169\.254 is an internal address \(linkLocal\)/)
        yield* refused("http://[::1]:8080/", /::1 is an internal address \(loopback\)/)
        yield* refused("http://localhost:9/", /localhost resolves to an internal address/)
        yield* refused("ftp://example.com/", /Only http and https URLs/)
        yield* refused("not a url", /is not a valid URL/)
        const raw = (body: unknown) =>
          send(HttpClientRequest.post("/api/v0/webhooks").pipe(
            HttpClientRequest.setHeader("x-api-key", tenant.apiKey),
            HttpClientRequest.bodyJsonUnsafe(body)
          ))
        expectErrorResponse(yield* raw({ url: "https://example.com/", events: ["lead.exploded"] }), 400, /"events\.0": Expected an event type, one of "campaign\.sent", /)
        expectErrorResponse(yield* raw({ url: "https://example.com/", events: [] }), 400, /"events"/)
        expectErrorResponse(yield* raw({ url: "https://example.com/", events: ["lead.created"], secret: "mine" }), 400, /Unknown field "secret"/)
        const created = yield* api.webhooks.create({ payload: { url: "https://example.com/", events: ["lead.created"] } })
        yield* failsWith(
          api.webhooks.update({ params: { webhookId: created.id }, payload: { url: "http://192.168.1.1/" } }),
          "BadRequest",
          /192\.168\.1\.1 is an internal address/
        )
      }))

    it.effect("need an owner or admin and a plan with integrations", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const member = yield* addPerson(tenant, { companyRole: "member" })
        const api = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(api.webhooks.list({ query: {} }), "Forbidden", /Your role \(member\) cannot manage webhooks/)
      }))

    it.effect("deliver committed events, signed, to the company's subscribed webhooks only, and log them", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const endpoint = yield* receiver
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created", "document.ready"] } })
        const idle = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"], enabled: false } })

        yield* sql.withTransaction(emit(tenant.companyId, "lead.created", { leadId: "lead_1", email: "ada@example.com" }))
        yield* sql.withTransaction(Effect.andThen(emit(tenant.companyId, "lead.created", { leadId: "lead_2" }), Effect.fail("rolled back")))
          .pipe(Effect.ignore)
        yield* emit(tenant.companyId, "campaign.sent", { campaignId: "cmp_1" })
        yield* emit(other.companyId, "lead.created", { leadId: "lead_3" })
        yield* drain(yield* DeliveryWorker)

        expect(endpoint.received).toHaveLength(1)
        const [request] = endpoint.received
        expect(verified(hook.secret, request!)).toEqual({
          type: "lead.created",
          timestamp: expect.any(String),
          data: { leadId: "lead_1", email: "ada@example.com" }
        })
        expect(request!.headers["webhook-id"]).toMatch(/^evt_/)
        expect(() => verified(idle.secret, request!)).toThrow()
        const stored = yield* sql<{ readonly secret: string }>`SELECT secret FROM webhooks WHERE id = ${hook.id}`
        expect(stored[0]!.secret).toMatch(/^v1\./)
        expect(stored[0]!.secret).not.toContain(hook.secret.slice("whsec_".length))

        const log = yield* api.webhooks.listDeliveries({ params: { webhookId: hook.id }, query: {} })
        expect(log.total).toBe(1)
        expect(log.items[0]).toMatchObject({
          eventId: request!.headers["webhook-id"],
          event: "lead.created",
          test: false,
          status: "delivered",
          attempts: 1,
          responseStatus: 200,
          responseExcerpt: "thanks",
          error: null,
          nextAttemptAt: null
        })
        expect(log.items[0]!.latencyMs).toBeGreaterThanOrEqual(0)
        expect((yield* api.webhooks.listDeliveries({ params: { webhookId: idle.id }, query: {} })).total).toBe(0)
      }))

    it.effect("send a test delivery on request, even to a disabled webhook", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["task.run_completed"], enabled: false } })
        const queued = yield* api.webhooks.test({ params: { webhookId: hook.id } })
        expect(queued).toMatchObject({ event: "webhook.test", test: true, status: "pending", attempts: 0 })
        yield* drain(yield* DeliveryWorker)
        expect(verified(hook.secret, endpoint.received[0]!)).toMatchObject({ type: "webhook.test", data: { webhookId: hook.id } })
        const log = yield* api.webhooks.listDeliveries({ params: { webhookId: hook.id }, query: { status: "delivered" } })
        expect(log.items.map((item) => [item.id, item.responseStatus])).toEqual([[queued.id, 200]])
      }))

    it.effect("sign with a secret kept in plain form before secrets were sealed, and fail a delivery whose sealed secret does not open", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const endpoint = yield* receiver
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const plain = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"] } })
        yield* sql`UPDATE webhooks SET secret = ${plain.secret} WHERE id = ${plain.id}`
        const moved = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"] } })
        const other = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"] } })
        // A sealed value is bound to its webhook: copied to another row, it does not open.
        yield* sql`UPDATE webhooks SET secret = (SELECT secret FROM webhooks WHERE id = ${other.id}) WHERE id = ${moved.id}`
        yield* api.webhooks.test({ params: { webhookId: plain.id } })
        yield* api.webhooks.test({ params: { webhookId: moved.id } })
        yield* drain(yield* DeliveryWorker)
        expect(endpoint.received.map((request) => verified(plain.secret, request))).toMatchObject([{ type: "webhook.test" }])
        const log = yield* api.webhooks.listDeliveries({ params: { webhookId: moved.id }, query: {} })
        expect(log.items[0]).toMatchObject({ status: "pending", responseStatus: null, error: expect.stringMatching(/^The signing secret: A sealed value cannot be opened/) })
      }))
  })

  it.layer(webhookTestServer(storage, {}, {}))((it) => {
    it.effect("check the address again at every delivery: a worker whose guard refuses it records why", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created"] } })
        yield* emit(tenant.companyId, "lead.created", { leadId: "lead_1" })
        yield* drain(yield* DeliveryWorker)
        expect(endpoint.received).toHaveLength(0)
        const [delivery] = (yield* api.webhooks.listDeliveries({ params: { webhookId: hook.id }, query: {} })).items
        expect(delivery).toMatchObject({ status: "pending", attempts: 1, responseStatus: null })
        expect(delivery!.error).toMatch(/127\.0\.0\.1 is an internal address \(loopback\)/)
      }))
  })
})
