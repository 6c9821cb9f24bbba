import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { CampaignWorker } from "../../../src/outreach/campaigns/CampaignWorker.ts"
import { EmbeddingsModel } from "../../../src/work/documents/EmbeddingsModel.ts"
import { Indexer } from "../../../src/work/documents/Indexer.ts"
import { KnowledgeConfig } from "../../../src/work/documents/KnowledgeConfig.ts"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { SchedulerConfig } from "../../../src/work/tasks/SchedulerConfig.ts"
import { DeliveryWorker } from "../../../src/integrations/webhooks/DeliveryWorker.ts"
import { campaignTestServer, drainSender } from "../../support/CampaignWorkerTest.ts"
import { getRedirect, send } from "../../support/Http.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { scriptedLlm } from "../../support/ScriptedLlm.ts"
import { parseMail, smtpServer } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"
import { drain, receiver, receiverAllowed, verified, withDeliveries } from "../../support/WebhookTest.ts"

/**
 * The events that happen today, each emitted where it happens and delivered,
 * signed, to a local receiver that verifies it with `standardwebhooks`.
 */

class Sink extends Context.Service<Sink, Effect.Success<ReturnType<typeof smtpServer>>>()("test/Sink") {}

const campaignsWithWebhooks = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.map(
    smtpServer({ onRecipient: (address) => address.startsWith("bounce") ? { code: 550, message: "5.1.1 No such user" } : undefined }),
    (sink) =>
      withDeliveries(campaignTestServer(storage, sink.url, { maxAttempts: 1 }, { outbound: receiverAllowed })).pipe(
        Layer.provideMerge(Layer.succeed(Sink, sink))
      )
  ))

const tasksAndDocumentsWithWebhooks = <A, E>(storage: Layer.Layer<A, E>) =>
  Scheduler.layer.pipe(
    Layer.provideMerge(scriptedLlm({})),
    Layer.provideMerge(SchedulerConfig.layerWith({ enabled: false })),
    // The indexer embeds with the server's offline model, not the scheduler's scripted one.
    Layer.provideMerge(Indexer.layer.pipe(
      Layer.provideMerge(EmbeddingsModel.layer),
      Layer.provideMerge(KnowledgeConfig.layerWith({ indexerEnabled: false })),
      Layer.provideMerge(withDeliveries(testServer(onLiveClock(storage), { outbound: receiverAllowed })))
    ))
  )

const path = (url: string) => new URL(url).pathname

/** Every event the receiver got, verified with the webhook's secret. */
const eventsAt = (endpoint: Effect.Success<typeof receiver>, secret: string) =>
  endpoint.received.map((request) => verified(secret, request) as { readonly type: string; readonly data: Record<string, unknown> })

describe.each(backends)("events on $name", ({ storage }) => {
  it.layer(campaignsWithWebhooks(storage), { timeout: 60_000 })((it) => {
    it.effect("campaign.sent, recipient.opened, recipient.clicked and recipient.bounced reach a webhook", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        const sink = yield* Sink
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({
          payload: {
            url: endpoint.url,
            events: ["campaign.sent", "recipient.opened", "recipient.clicked", "recipient.bounced"]
          }
        })
        const list = yield* api.lists.create({ payload: { name: "Customers", rows: [{ email: "ada@example.com" }, { email: "bounce@example.com" }] } })
        const campaign = yield* api.campaigns.create({
          payload: { name: "Sale", subject: "Our sale", listId: list.id, bodyDocument: { html: `<p><a href="https://shop.example/sale">Sale</a></p>` } }
        })
        yield* api.campaigns.send({ params: { campaignId: campaign.id }, payload: null })
        yield* drainSender(yield* CampaignWorker)
        const mail = yield* parseMail((yield* sink.received).find((message) => message.to[0] === "ada@example.com")!)
        const html = String(mail.html)
        yield* send(HttpClientRequest.get(path(/<img src="([^"]+\/t\/o\/[^"]+)"/.exec(html)![1]!)))
        expect((yield* getRedirect(path(/href="([^"]+\/t\/c\/[^"]+)"/.exec(html)![1]!))).status).toBe(302)

        yield* drain(yield* DeliveryWorker)
        const recipients = (yield* api.campaigns.listRecipients({ params: { campaignId: campaign.id }, query: {} })).items
        const ada = recipients.find((recipient) => recipient.email === "ada@example.com")!
        const bounced = recipients.find((recipient) => recipient.email === "bounce@example.com")!
        const events = eventsAt(endpoint, hook.secret)
        expect(events.map((event) => event.type).toSorted()).toEqual(
          ["campaign.sent", "recipient.bounced", "recipient.clicked", "recipient.opened"]
        )
        const of = (type: string) => events.find((event) => event.type === type)!.data
        expect(of("campaign.sent")).toMatchObject({ campaignId: campaign.id, name: "Sale", sent: 1, failed: 1 })
        expect(of("recipient.opened")).toMatchObject({ campaignId: campaign.id, recipientId: ada.id, email: "ada@example.com" })
        expect(of("recipient.clicked")).toMatchObject({ recipientId: ada.id, url: "https://shop.example/sale" })
        expect(of("recipient.bounced")).toMatchObject({ recipientId: bounced.id, email: "bounce@example.com", reason: expect.stringContaining("550") })
      }))
  })

  it.layer(tasksAndDocumentsWithWebhooks(storage), { timeout: 60_000 })((it) => {
    it.effect("document.ready reaches a webhook once the document is indexed, not before", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["document.ready"] } })
        const [document] = (yield* api.knowledge.create({ payload: { title: "Pricing", content: "# Pricing\n\nTen euros.", tags: ["sales"] } }))
          .documents
        expect(document!.status).toBe("indexing")
        const deliveries = yield* DeliveryWorker
        yield* drain(deliveries)
        expect(endpoint.received).toHaveLength(0)
        expect(yield* (yield* Indexer).runDue).toBe(1)
        expect(yield* api.knowledge.get({ params: { documentId: document!.id } })).toMatchObject({ status: "ready" })
        yield* drain(deliveries)
        expect(eventsAt(endpoint, hook.secret)).toEqual([{
          type: "document.ready",
          timestamp: expect.any(String),
          data: { documentId: document!.id, title: "Pricing", type: "md", tags: ["sales"], projectId: null, chunkCount: 1 }
        }])
      }))

    it.effect("lead.created and lead.status_changed reach a webhook; a change that moves no status emits nothing", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["lead.created", "lead.status_changed"] } })
        const lead = yield* api.leads.create({ payload: { email: "ada@example.com", firstName: "Ada" } })
        yield* api.leads.update({ params: { leadId: lead.id }, payload: { firstName: "Ada L." } })
        yield* api.leads.update({ params: { leadId: lead.id }, payload: { status: "interested" } })
        yield* drain(yield* DeliveryWorker)
        const delivered = eventsAt(endpoint, hook.secret).map((event) => [event.type, event.data] as const)
        expect(delivered.sort(([a], [b]) => a.localeCompare(b))).toEqual([
          ["lead.created", { leadId: lead.id, email: "ada@example.com" }],
          ["lead.status_changed", { leadId: lead.id, email: "ada@example.com", from: "new", to: "interested", at: expect.any(String) }]
        ])
      }))

    it.effect("task.run_completed reaches a webhook when a run ends", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        const endpoint = yield* receiver
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const hook = yield* api.webhooks.create({ payload: { url: endpoint.url, events: ["task.run_completed"] } })
        const employee = yield* api.employees.create({ payload: { name: "Ada", role: "analyst" } })
        const task = yield* api.scheduledTasks.create({
          payload: { name: "Digest", prompt: "Summarise", scheduleType: "one_time", scheduledAt: new Date(Date.now() + 3_600_000), employeeId: employee.id }
        })
        yield* api.scheduledTasks.run({ params: { task_id: task.id }, payload: null })
        expect(yield* (yield* Scheduler).runDue).toBe(1)
        yield* drain(yield* DeliveryWorker)
        const [execution] = (yield* api.scheduledTasks.listExecutions({ params: { task_id: task.id }, query: {} })).items
        expect(eventsAt(endpoint, hook.secret)).toEqual([{
          type: "task.run_completed",
          timestamp: expect.any(String),
          data: expect.objectContaining({ taskId: task.id, executionId: execution!.id, trigger: "manual", status: "succeeded", error: null })
        }])
      }))
  })
})
