import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { CampaignWorker } from "../../../src/outreach/campaigns/CampaignWorker.ts"
import { campaignTestServer, drainSender } from "../../support/CampaignWorkerTest.ts"
import { getRedirect, send } from "../../support/Http.ts"
import { parseMail, smtpServer, type SmtpReply } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

const answer = (address: string): SmtpReply | undefined =>
  address.startsWith("bounce") ? { code: 550, message: "5.1.1 No such user" } : undefined

class Sink extends Context.Service<Sink, Effect.Success<ReturnType<typeof smtpServer>>>()("test/TimelineSink") {}

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.map(smtpServer({ onRecipient: answer }), (sink) =>
    campaignTestServer(storage, sink.url, { maxAttempts: 3, concurrency: 4 }).pipe(Layer.provideMerge(Layer.succeed(Sink, sink)))))

const html = `<p>Hello {{firstName | friend}}</p><p><a href="https://shop.example/sale">The sale</a></p>
<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>`

const path = (url: string) => new URL(url).pathname

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 60_000 })(`lead timeline from campaign events on ${backend.name}`, (it) => {
    it.effect("sending, bouncing, opening, clicking and unsubscribing write the timeline and move the status", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const sink = yield* Sink
        const before = (yield* sink.received).length
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const list = yield* api.lists.create({
          payload: {
            name: "Customers",
            rows: [{ email: "ada@example.com", firstName: "Ada" }, { email: "bounce@example.com" }, { email: "carl@example.com" }]
          }
        })
        // List rows made the leads.
        const byEmail = new Map((yield* api.leads.list({ query: {} })).items.map((lead) => [lead.email, lead]))
        expect([...byEmail.keys()].sort()).toEqual(["ada@example.com", "bounce@example.com", "carl@example.com"])
        const campaign = yield* api.campaigns.create({
          payload: { name: "Sale", subject: "Our sale", bodyDocument: { html }, listId: list.id }
        })
        yield* api.campaigns.send({ params: { campaignId: campaign.id }, payload: null })
        expect(yield* drainSender(yield* CampaignWorker)).toBe(3)

        const timeline = (email: string) =>
          Effect.map(
            api.leads.activities({ params: { leadId: byEmail.get(email)!.id }, query: {} }),
            (page) => page.items.map(({ id: _, at: __, ...activity }) => activity)
          )
        const status = (email: string) => Effect.map(api.leads.get({ params: { leadId: byEmail.get(email)!.id } }), (lead) => lead.status)
        expect(yield* status("ada@example.com")).toBe("contacted")
        expect(yield* timeline("ada@example.com")).toEqual([
          { type: "status_changed", detail: { from: "new", to: "contacted" } },
          { type: "sent", campaignId: campaign.id, detail: { subject: "Our sale" } }
        ])
        expect(yield* status("bounce@example.com")).toBe("bounced")
        expect(yield* timeline("bounce@example.com")).toEqual([
          { type: "status_changed", detail: { from: "new", to: "bounced" } },
          { type: "bounced", campaignId: campaign.id, detail: { error: expect.stringContaining("5.1.1 No such user") } }
        ])

        const received = (yield* sink.received).slice(before)
        const mailTo = (email: string) => parseMail(received.find((mail) => mail.to[0] === email)!)
        const ada = String((yield* mailTo("ada@example.com")).html)
        const pixelUrl = /<img src="(https:\/\/mail\.example\.test\/api\/v0\/t\/o\/[^"]+)"/.exec(ada)![1]
        const clickUrl = /href="(https:\/\/mail\.example\.test\/api\/v0\/t\/c\/[^"]+)"/.exec(ada)![1]
        yield* TestClock.adjust("1 minute")
        expect((yield* send(HttpClientRequest.get(path(pixelUrl)))).status).toBe(200)
        yield* TestClock.adjust("1 minute")
        expect((yield* getRedirect(path(clickUrl))).location).toBe("https://shop.example/sale")
        expect((yield* timeline("ada@example.com")).slice(0, 2)).toEqual([
          { type: "clicked", campaignId: campaign.id, detail: { url: "https://shop.example/sale" } },
          { type: "opened", campaignId: campaign.id, detail: {} }
        ])
        expect(yield* status("ada@example.com")).toBe("contacted")

        const carl = String((yield* mailTo("carl@example.com")).html)
        const unsubscribeUrl = /href="(https:\/\/mail\.example\.test\/api\/v0\/t\/u\/[^"]+)"/.exec(carl)![1]
        yield* TestClock.adjust("1 minute")
        const unsubscribe = HttpClientRequest.post(path(unsubscribeUrl)).pipe(
          HttpClientRequest.bodyText("List-Unsubscribe=One-Click", "application/x-www-form-urlencoded")
        )
        expect((yield* send(unsubscribe)).status).toBe(200)
        expect(yield* status("carl@example.com")).toBe("unsubscribed")
        expect((yield* timeline("carl@example.com")).slice(0, 2)).toEqual([
          { type: "status_changed", detail: { from: "contacted", to: "unsubscribed" } },
          { type: "unsubscribed", campaignId: campaign.id, detail: {} }
        ])
      }))
  })
}
