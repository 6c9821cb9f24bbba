import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { CampaignWorker } from "../../../src/outreach/campaigns/CampaignWorker.ts"
import { uncertainReason } from "../../../src/outreach/campaigns/CampaignStates.ts"
import { RecipientsRepo } from "../../../src/outreach/campaigns/RecipientsRepo.ts"
import { Storage } from "../../../src/storage/Database.ts"
import { getRedirect, send } from "../../support/Http.ts"
import {
  anotherWorker,
  campaignTestServer,
  countingInFlight,
  drainSender,
  smtpMailer,
  testMailLeaseMs,
  testRetryBaseMs
} from "../../support/CampaignWorkerTest.ts"
import { parseMail, smtpServer, type SmtpReply } from "../../support/SmtpServer.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

/**
 * How the loopback SMTP server answers, by address: `tempfail…` is refused
 * with 451 on its first `attempts` tries, `always-tempfail…` always, and
 * `bounce…` with 550 5.1.1 (no such user).
 */
const answer = (address: string, attempt: number): SmtpReply | undefined => {
  if (address.startsWith("bounce")) return { code: 550, message: "5.1.1 No such user" }
  if (address.startsWith("always-tempfail")) return { code: 451, message: "4.3.0 Try again later" }
  if (address.startsWith("tempfail") && attempt === 1) return { code: 451, message: "4.3.0 Try again later" }
  return undefined
}

class Sink extends Context.Service<Sink, Effect.Success<ReturnType<typeof smtpServer>>>()("test/Sink") {}

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.map(smtpServer({ onRecipient: answer }), (sink) =>
    campaignTestServer(storage, sink.url, { maxAttempts: 3, concurrency: 4 }).pipe(
      Layer.provideMerge(Layer.succeed(Sink, sink))
    )))

const html = `<html><body><h1>{{RANDOM | Hello | Hi | Hey}} {{firstName | friend}}</h1>
<p>News for {{company}}.</p><p><a href="https://shop.example/sale?who={{email}}">The sale</a></p>
<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p></body></html>`

const campaignFor = (rows: ReadonlyArray<{ readonly email: string } & Record<string, string>>) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant()
    const api = yield* client({ apiKey: tenant.apiKey })
    const list = yield* api.lists.create({ payload: { name: "Customers", rows } })
    const campaign = yield* api.campaigns.create({
      payload: { name: "Sale", subject: "{{firstName | Friend}}, our sale", bodyDocument: { html }, listId: list.id }
    })
    return { tenant, api, campaign, params: { campaignId: campaign.id } }
  })

const path = (url: string) => new URL(url).pathname

for (const backend of backends) {
  it.layer(serverWith(backend.storage), { timeout: 60_000 })(`campaign worker on ${backend.name}`, (it) => {
    it.effect("delivers over SMTP: merge fields, spintax, tracked links, pixel, both parts, unsubscribe headers", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const sink = yield* Sink
        const before = (yield* sink.received).length
        const { api, campaign, params } = yield* campaignFor([
          { email: "ada@example.com", firstName: "Ada", company: "Engines & Co" },
          { email: "bob@example.com" }
        ])
        yield* api.campaigns.send({ params, payload: null })
        const worker = yield* CampaignWorker
        expect(yield* drainSender(worker)).toBe(2)

        const received = (yield* sink.received).slice(before)
        expect(received.map((mail) => mail.to)).toEqual(expect.arrayContaining([["ada@example.com"], ["bob@example.com"]]))
        const recipients = yield* api.campaigns.listRecipients({ params, query: {} })
        const ada = recipients.items.find((r) => r.email === "ada@example.com")!
        const mail = yield* parseMail(received.find((m) => m.to[0] === "ada@example.com")!)
        expect(mail.subject).toBe("Ada, our sale")
        expect(mail.from?.value).toEqual([{ name: "Shop", address: "news@shop.example" }])
        expect(mail.messageId).toBe(`<${ada.id}@shop.example>`)
        const lines = new Map(mail.headerLines.map((header) => [header.key, header.line]))
        expect(lines.get("list-unsubscribe-post")).toBe("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
        const unsubscribeUrl = /^List-Unsubscribe:\s*<([^>]+)>$/.exec(lines.get("list-unsubscribe") ?? "")![1]
        expect(unsubscribeUrl).toMatch(/^https:\/\/mail\.example\.test\/api\/v0\/t\/u\//)
        const body = String(mail.html)
        expect(body).toMatch(/<h1>(Hello|Hi|Hey) Ada<\/h1>/)
        expect(body).toContain("News for Engines &amp; Co.")
        expect(body).not.toContain("shop.example/sale")
        const clickUrl = /href="(https:\/\/mail\.example\.test\/api\/v0\/t\/c\/[^"]+)"/.exec(body)![1]
        const pixelUrl = /<img src="(https:\/\/mail\.example\.test\/api\/v0\/t\/o\/[^"]+)"/.exec(body)![1]
        expect(body).toContain(`href="${unsubscribeUrl}"`)
        expect(mail.text).toMatch(/(Hello|Hi|Hey) Ada/i)
        expect(mail.text).toContain("https://shop.example/sale?who=ada@example.com")
        expect(mail.text).toContain("News for Engines & Co.")

        const bob = yield* parseMail(received.find((m) => m.to[0] === "bob@example.com")!)
        expect(bob.subject).toBe("Friend, our sale")
        expect(String(bob.html)).toMatch(/(Hello|Hi|Hey) friend/)

        const done = yield* api.campaigns.get({ params })
        expect(done).toMatchObject({ status: "sent", completedAt: new Date(start) })
        expect(recipients.items.map((r) => r.status)).toEqual(["sent", "sent"])
        expect(ada.sentAt).toBe(new Date(start).toISOString())

        // The public links, with no API key.
        const pixel = yield* send(HttpClientRequest.get(path(pixelUrl)))
        expect(pixel.status).toBe(200)
        expect(pixel.headers["content-type"]).toBe("image/gif")
        const click = yield* getRedirect(path(clickUrl))
        expect(click.status).toBe(302)
        expect(click.location).toBe("https://shop.example/sale?who=ada@example.com")
        yield* send(HttpClientRequest.get(path(pixelUrl)))
        const tracked = (yield* api.campaigns.listRecipients({ params, query: { search: "ada" } })).items[0]
        expect(tracked).toMatchObject({ opened: true, openCount: 2, clicked: true, clickCount: 1 })
        expect(tracked.firstOpenedDate).toBe(new Date(start).toISOString())
        const metrics = (yield* api.campaigns.listRecipients({ params, query: { search: "nobody" } })).metrics
        expect(metrics).toMatchObject({ total: 2, sent: 2, opened: 1, clicked: 1, openRate: 0.5, clickRate: 0.5 })

        // One character of the signature changed: its first, since the low bits of base64url's last character are padding.
        const signatureAt = path(clickUrl).lastIndexOf(".") + 1
        const tampered = path(clickUrl).slice(0, signatureAt) + (path(clickUrl)[signatureAt] === "A" ? "B" : "A") + path(clickUrl).slice(signatureAt + 1)
        const forgeries = [tampered, path(clickUrl).replace("/t/c/", "/t/o/"), "/api/v0/t/u/bm9wZQ.bm9wZQ", `/api/v0/t/o/${"x".repeat(700)}`]
        for (const forged of forgeries) {
          const response = yield* send(HttpClientRequest.get(forged))
          expect(response.status).toBe(404)
          expect(JSON.parse(response.text)).toEqual({ error: expect.any(String) })
        }

        const page = yield* send(HttpClientRequest.get(path(unsubscribeUrl)))
        expect(page.status).toBe(200)
        expect(page.text).toContain("ada@example.com")
        expect((yield* api.lists.listSuppressions({ query: {} })).total).toBe(0)
        const oneClick = yield* send(
          HttpClientRequest.post(path(unsubscribeUrl)).pipe(
            HttpClientRequest.bodyText("List-Unsubscribe=One-Click", "application/x-www-form-urlencoded")
          )
        )
        expect(oneClick.status).toBe(200)
        const suppressed = yield* api.lists.listSuppressions({ query: {} })
        expect(suppressed.items.map((s) => [s.email, s.reason])).toEqual([["ada@example.com", "unsubscribed"]])
        expect(campaign.id).toBe(params.campaignId)
      }))

    it.effect("SMTP 4xx is retried after the backoff; always 4xx ends failed; 5xx fails and a hard bounce is suppressed", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor([
          { email: "tempfail@example.com" },
          { email: "always-tempfail@example.com" },
          { email: "bounce@example.com" }
        ])
        yield* api.campaigns.send({ params, payload: null })
        const worker = yield* CampaignWorker
        expect(yield* drainSender(worker)).toBe(3)
        const statuses = () =>
          Effect.map(api.campaigns.listRecipients({ params, query: {} }), (page) =>
            Object.fromEntries(page.items.map((r) => [r.email.split("@")[0], [r.status, r.errorMessage]])))
        expect(yield* statuses()).toEqual({
          "tempfail": ["pending", expect.stringContaining("451")],
          "always-tempfail": ["pending", expect.stringContaining("451")],
          "bounce": ["failed", expect.stringContaining("550")]
        })
        const suppressed = yield* api.lists.listSuppressions({ query: {} })
        expect(suppressed.items.map((s) => [s.email, s.reason])).toEqual([["bounce@example.com", "hard_bounce"]])

        expect(yield* drainSender(worker)).toBe(0)
        yield* TestClock.adjust(testRetryBaseMs)
        expect(yield* drainSender(worker)).toBe(2)
        expect((yield* statuses()).tempfail).toEqual(["sent", null])
        expect((yield* api.campaigns.get({ params })).status).toBe("sending")
        yield* TestClock.adjust(2 * testRetryBaseMs)
        expect(yield* drainSender(worker)).toBe(1)
        expect((yield* statuses())["always-tempfail"]).toEqual(["failed", expect.stringContaining("451")])
        // A partial failure ends sent, without an error; the counts show it.
        const finished = yield* api.campaigns.get({ params })
        expect(finished).toMatchObject({ status: "sent", errorMessage: null })
        const { metrics } = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(metrics).toMatchObject({ total: 3, sent: 1, failed: 2 })
      }))

    it.effect("a campaign whose every recipient failed ends failed, its errorMessage naming the server's answer", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor([{ email: "bounce-1@example.com" }, { email: "bounce-2@example.com" }])
        yield* api.campaigns.send({ params, payload: null })
        expect(yield* drainSender(yield* CampaignWorker)).toBe(2)
        const campaign = yield* api.campaigns.get({ params })
        expect(campaign.status).toBe("failed")
        expect(campaign.errorMessage).toMatch(/^Every recipient failed \(2\); the most common reason: 550 5\.1\.1 No such user/)
        expect(campaign.completedAt).not.toBeNull()
      }))

    it.effect("pause stops claiming, resume continues, cancel skips the rest", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const sink = yield* Sink
        const before = (yield* sink.received).length
        const { api, params } = yield* campaignFor(
          Array.from({ length: 5 }, (_, i) => ({ email: `p${i}@example.com` }))
        )
        yield* api.campaigns.send({ params, payload: null })
        yield* api.campaigns.pause({ params, payload: null })
        const worker = yield* CampaignWorker
        expect(yield* worker.sendBatch).toBe(0)
        expect((yield* sink.received).length).toBe(before)
        yield* api.campaigns.resume({ params, payload: null })
        expect(yield* drainSender(worker)).toBe(5)
        expect((yield* sink.received).length).toBe(before + 5)

        const second = yield* campaignFor([{ email: "c1@example.com" }, { email: "c2@example.com" }])
        yield* second.api.campaigns.send({ params: second.params, payload: null })
        yield* second.api.campaigns.cancel({ params: second.params, payload: null })
        expect(yield* worker.sendBatch).toBe(0)
        const page = yield* second.api.campaigns.listRecipients({ params: second.params, query: {} })
        expect(page.items.map((r) => r.status)).toEqual(["skipped", "skipped"])
        expect(page.metrics).toMatchObject({ total: 2, sent: 0, skipped: 2 })
        expect((yield* second.api.campaigns.get({ params: second.params })).status).toBe("cancelled")
      }))

    it.effect("a dead worker's recipients: the one in flight becomes uncertain, the others are sent once the lease expires", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const sink = yield* Sink
        const before = (yield* sink.received).length
        const { api, params } = yield* campaignFor(Array.from({ length: 3 }, (_, i) => ({ email: `d${i}@example.com` })))
        yield* api.campaigns.send({ params, payload: null })
        // A worker that claims, hands one message to the server and dies: its lease stands, nothing is recorded.
        const repo = yield* RecipientsRepo
        const dead = yield* repo.claim(new Date(start), new Date(start + testMailLeaseMs), 10)
        expect(dead.recipients).toHaveLength(3)
        const inFlight = dead.recipients.find((recipient) => recipient.email === "d1@example.com")!
        expect(yield* repo.begin(inFlight.id, dead.token, new Date(start))).toBe(true)
        const worker = yield* CampaignWorker
        expect(yield* worker.sendBatch).toBe(0)
        yield* TestClock.adjust(testMailLeaseMs - 1)
        expect(yield* worker.sendBatch).toBe(0)
        yield* TestClock.adjust(1)
        expect(yield* drainSender(worker)).toBe(2)
        const page = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(page.items.find((r) => r.email === "d1@example.com")).toMatchObject({
          status: "uncertain",
          errorMessage: uncertainReason
        })
        expect(page.metrics).toMatchObject({ total: 3, sent: 2, uncertain: 1 })
        expect((yield* api.campaigns.get({ params })).status).toBe("sent")
        // The dead worker's late record cannot overwrite: its lease is gone.
        const late = yield* RecipientsRepo.use((repo) =>
          repo.record(dead.recipients[0].id, dead.token, { _tag: "Failed", error: "late" }, 3, new Date(start))
        )
        expect(late).toBe(false)
        const received = (yield* sink.received).slice(before).map((mail) => mail.to[0]).toSorted()
        expect(received).toEqual(["d0@example.com", "d2@example.com"])
      }))

    it.effect("one statement records several recipients' in-flight marks and outcomes, each only under its own lease", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor(Array.from({ length: 4 }, (_, i) => ({ email: `w${i}@example.com` })))
        yield* api.campaigns.send({ params, payload: null })
        const repo = yield* RecipientsRepo
        const claim = yield* repo.claim(new Date(start), new Date(start + testMailLeaseMs), 10)
        const [begun, foreign, sent, retried] = claim.recipients
        const at = new Date(start)
        expect(yield* repo.begin(sent!.id, claim.token, at)).toBe(true)
        const applied = yield* repo.write([
          { id: begun!.id, token: claim.token, at, change: { _tag: "Begin" } },
          { id: foreign!.id, token: "lease_someone_else", at, change: { _tag: "Begin" } },
          { id: sent!.id, token: claim.token, at, change: { _tag: "Sent", messageId: "<sent@example.com>" } },
          // A temporary failure past the last attempt (1 here) fails the recipient.
          { id: retried!.id, token: claim.token, at, change: { _tag: "Retry", at: new Date(start + 60_000), error: "451 later" } }
        ], 1)
        expect(applied).toEqual([true, false, true, true])
        const page = yield* api.campaigns.listRecipients({ params, query: {} })
        const statusOf = (id: string) => page.items.find((item) => item.id === id)
        expect(statusOf(begun!.id)).toMatchObject({ status: "pending" })
        expect(statusOf(foreign!.id)).toMatchObject({ status: "pending" })
        expect(statusOf(sent!.id)).toMatchObject({ status: "sent", sentAt: at.toISOString() })
        expect(statusOf(retried!.id)).toMatchObject({ status: "failed", errorMessage: "451 later" })
        expect(page.metrics).toMatchObject({ total: 4, sent: 1, failed: 1 })
        // The recipient marked in flight is the one a dead worker would leave uncertain.
        yield* TestClock.adjust(testMailLeaseMs)
        expect((yield* repo.abandon(new Date(start + testMailLeaseMs))).map((recipient) => recipient.id)).toEqual([begun!.id])
        // Nothing of it is left for the next test's sender.
        yield* api.campaigns.cancel({ params, payload: null })
      }))

    it.effect("at start, the embedded database's leases are taken over at once; PostgreSQL's wait for expiry", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor([{ email: "t0@example.com" }, { email: "t1@example.com" }])
        yield* api.campaigns.send({ params, payload: null })
        const dead = yield* RecipientsRepo.use((repo) => repo.claim(new Date(start), new Date(start + testMailLeaseMs), 10))
        expect(dead.recipients).toHaveLength(2)
        const worker = yield* CampaignWorker
        yield* worker.takeOver
        const embedded = (yield* Storage).backend === "pglite"
        expect(yield* drainSender(worker)).toBe(embedded ? 2 : 0)
        yield* TestClock.adjust(testMailLeaseMs)
        yield* drainSender(worker)
        expect((yield* api.campaigns.get({ params })).status).toBe("sent")
      }))

    it.effect("two workers racing deliver every recipient exactly once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const sink = yield* Sink
        const before = (yield* sink.received).length
        const emails = Array.from({ length: 60 }, (_, i) => `race${i}@example.com`)
        const { api, params } = yield* campaignFor(emails.map((email) => ({ email })))
        yield* api.campaigns.send({ params, payload: null })
        const first = yield* CampaignWorker
        const second = yield* anotherWorker
        expect(second).not.toBe(first)
        const [a, b] = yield* Effect.all([drainSender(first), drainSender(second)], { concurrency: 2 })
        expect(a + b).toBe(60)
        const received = (yield* sink.received).slice(before).map((mail) => mail.to[0]).toSorted()
        expect(received).toEqual(emails.toSorted())
        expect((yield* api.campaigns.get({ params })).status).toBe("sent")
      }))

    it.effect("a scheduled campaign starts at scheduledAt; one whose list is gone by then fails", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor([{ email: "s1@example.com" }])
        const doomed = yield* campaignFor([{ email: "s2@example.com" }])
        const at = new Date(start + 3_600_000)
        yield* api.campaigns.schedule({ params, payload: { scheduledAt: at } })
        const scheduled = yield* doomed.api.campaigns.schedule({ params: doomed.params, payload: { scheduledAt: at } })
        yield* doomed.api.lists.delete({ params: { listId: scheduled.listId! } })
        const worker = yield* CampaignWorker
        const second = yield* anotherWorker
        expect(yield* worker.startDue).toBe(0)
        yield* TestClock.setTime(at.getTime())
        const [a, b] = yield* Effect.all([worker.startDue, second.startDue], { concurrency: 2 })
        expect(a + b).toBe(2)
        expect(yield* api.campaigns.get({ params })).toMatchObject({ status: "sending", startedAt: at })
        expect((yield* api.campaigns.listRecipients({ params, query: {} })).total).toBe(1)
        const failed = yield* doomed.api.campaigns.get({ params: doomed.params })
        expect(failed).toMatchObject({ status: "failed", errorMessage: expect.stringMatching(/not found/) })
        expect(yield* worker.startDue).toBe(0)
      }))
  })

  const most = { value: 0 }
  const countingServer = Layer.unwrap(Effect.map(smtpServer(), (sink) =>
    campaignTestServer(backend.storage, sink.url, { concurrency: 3 }, {}, {
      campaign: { batchSize: 5 },
      mailer: countingInFlight(smtpMailer(sink.url), most)
    })))
  it.layer(countingServer, { timeout: 60_000 })(`campaign sender loops on ${backend.name}`, (it) => {
    it.effect("a claim keeps to MAIL_BATCH_SIZE; two sender loops of one worker side by side keep to MAIL_CONCURRENCY messages in flight", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const { api, params } = yield* campaignFor(Array.from({ length: 20 }, (_, i) => ({ email: `loop${i}@example.com` })))
        yield* api.campaigns.send({ params, payload: null })
        // Made over this layer's settings (batches of 5, 3 in flight) and counting mailer.
        const worker = yield* anotherWorker
        // A claim keeps to MAIL_BATCH_SIZE however many are pending.
        expect(yield* worker.sendBatch).toBe(5)
        // As the server runs them: two loops over the same worker, each with its own batches of 5.
        const [a, b] = yield* Effect.all([drainSender(worker), drainSender(worker)], { concurrency: 2 })
        expect(a + b).toBe(15)
        expect(Math.min(a, b)).toBeGreaterThan(0)
        // Both loops had messages to start (3 each): the shared limit held them to 3 in flight, not 6.
        expect(most.value).toBe(3)
        expect((yield* api.campaigns.get({ params })).status).toBe("sent")
      }))
  })
}
