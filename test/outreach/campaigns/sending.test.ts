import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { expectErrorResponse, getWithKey, send } from "../../support/Http.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

const html = "<p>Hello {{firstName | there}}</p><a href=\"https://example.com/offer\">Offer</a>"

/** A tenant's typed client and a ready draft whose list has `emails` as rows. */
const readyCampaign = (emails: ReadonlyArray<string>, subject = "Hi {{firstName}}") =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant()
    const api = yield* client({ apiKey: tenant.apiKey })
    const list = yield* api.lists.create({
      payload: { name: "Customers", rows: emails.map((email, index) => ({ email, firstName: `Name${index}` })) }
    })
    const campaign = yield* api.campaigns.create({
      payload: { name: "Launch", subject, bodyDocument: { html }, listId: list.id }
    })
    return { tenant, api, list, campaign, params: { campaignId: campaign.id } }
  })

for (const backend of backends) {
  it.layer(testServer(onLiveClock(backend.storage)))(`campaign sending on ${backend.name}`, (it) => {
    it.effect("send answers 202 with status sending and one recipient per row, suppressed ones skipped", () =>
      Effect.gen(function*() {
        const { api, campaign, params } = yield* readyCampaign(["a@example.com", "B@Example.com", "c@example.com"])
        yield* api.lists.addSuppression({ payload: { email: "b@example.com" } })
        const before = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(before).toEqual({
          items: [],
          total: 0,
          metrics: { total: 0, sent: 0, failed: 0, skipped: 0, uncertain: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, openRate: 0, clickRate: 0, replyRate: 0 }
        })
        const sending = yield* api.campaigns.send({ params, payload: null })
        expect(sending).toMatchObject({ id: campaign.id, status: "sending", listId: campaign.listId })
        expect(sending.startedAt).toBeInstanceOf(Date)

        const recipients = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(recipients.total).toBe(3)
        expect(recipients.items.map((r) => [r.email, r.status])).toEqual([
          ["c@example.com", "pending"],
          ["B@Example.com", "skipped"],
          ["a@example.com", "pending"]
        ])
        expect(recipients.items[1].errorMessage).toMatch(/Suppressed/)
        expect(recipients.metrics).toMatchObject({ total: 3, skipped: 1, sent: 0 })
        const first = recipients.items[2]
        expect(first).toEqual({
          id: expect.any(String),
          campaignId: campaign.id,
          listRowId: expect.any(String),
          email: "a@example.com",
          status: "pending",
          sentAt: null,
          errorMessage: null,
          opened: false,
          clicked: false,
          firstOpenedDate: null,
          lastOpenedDate: null,
          firstClickedDate: null,
          lastClickedDate: null,
          openCount: 0,
          clickCount: 0,
          repliedDate: null,
          bouncedDate: null,
          created_date: expect.any(String),
          updated_date: expect.any(String)
        })
      }))

    it.effect("send answers 400 without a list, rows, subject or body, and 404 for another company's list", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* client({ apiKey: tenant.apiKey })
        const empty = yield* api.lists.create({ payload: { name: "Empty" } })
        const full = yield* api.lists.create({ payload: { name: "Full", rows: [{ email: "x@example.com" }] } })
        const theirs = yield* (yield* client({ apiKey: other.apiKey })).lists.create({
          payload: { name: "Theirs", rows: [{ email: "y@example.com" }] }
        })
        const make = (subject: string, body: string) =>
          api.campaigns.create({ payload: { name: "C", subject, bodyDocument: { html: body } } })
        const cases = [
          [yield* make("S", "<p>x</p>"), undefined, /no list/],
          [yield* make("S", "<p>x</p>"), empty.id, /has no rows/],
          [yield* make("", "<p>x</p>"), full.id, /subject/],
          [yield* make("S", "  "), full.id, /bodyDocument.html/],
          [yield* make("S", "<p>{{RANDOM | a | b</p>"), full.id, /bodyDocument.html/]
        ] as const
        for (const [campaign, listId, message] of cases) {
          const error = yield* Effect.flip(api.campaigns.send({ params: { campaignId: campaign.id }, payload: { listId } }))
          expect(error).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(message) })
          expect((yield* api.campaigns.get({ params: { campaignId: campaign.id } })).status).toBe("draft")
        }
        const campaign = yield* make("S", "<p>x</p>")
        const missing = yield* Effect.flip(
          api.campaigns.send({ params: { campaignId: campaign.id }, payload: { listId: theirs.id } })
        )
        expect(missing._tag).toBe("NotFound")
      }))

    it.effect("moves the machine does not allow answer 400 naming both statuses", () =>
      Effect.gen(function*() {
        const { api, params } = yield* readyCampaign(["a@example.com"])
        const pauseDraft = yield* Effect.flip(api.campaigns.pause({ params, payload: null }))
        expect(pauseDraft).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/draft.*paused/) })
        yield* api.campaigns.send({ params, payload: {} })
        const again = yield* Effect.flip(api.campaigns.send({ params, payload: null }))
        expect(again).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/sending.*sending/) })
        const patch = yield* Effect.flip(api.campaigns.update({ params, payload: { name: "x" } }))
        expect(patch).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/sending/) })
        const restore = yield* Effect.flip(api.campaigns.restoreVersion({ params: { ...params, version: 1 }, payload: null }))
        expect(restore).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/sending/) })
        const remove = yield* Effect.flip(api.campaigns.delete({ params }))
        expect(remove).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/sending/) })

        expect((yield* api.campaigns.pause({ params, payload: null })).status).toBe("paused")
        const resumeResumed = yield* api.campaigns.resume({ params, payload: null })
        expect(resumeResumed.status).toBe("sending")
        const resumeSending = yield* Effect.flip(api.campaigns.resume({ params, payload: null }))
        expect(resumeSending).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/sending.*sending/) })

        const cancelled = yield* api.campaigns.cancel({ params, payload: null })
        expect(cancelled.status).toBe("cancelled")
        const recipients = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(recipients.items.map((r) => [r.status, r.errorMessage])).toEqual([["skipped", "Campaign cancelled"]])
        const resumeCancelled = yield* Effect.flip(api.campaigns.resume({ params, payload: null }))
        expect(resumeCancelled).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/cancelled.*sending/) })
      }))

    it.effect("schedule needs a future time; a scheduled campaign may be edited, re-scheduled, cancelled", () =>
      Effect.gen(function*() {
        const { api, tenant, params } = yield* readyCampaign(["a@example.com"])
        const now = Date.parse("2026-06-01T08:00:00Z")
        yield* TestClock.setTime(now)
        const past = yield* Effect.flip(
          api.campaigns.schedule({ params, payload: { scheduledAt: new Date(now - 60_000) } })
        )
        expect(past).toMatchObject({ _tag: "BadRequest", error: expect.stringMatching(/future/) })
        const at = new Date(now + 3_600_000)
        const scheduled = yield* api.campaigns.schedule({ params, payload: { scheduledAt: at } })
        expect(scheduled).toMatchObject({ status: "scheduled", scheduledAt: at })
        expect((yield* api.campaigns.listRecipients({ params, query: {} })).total).toBe(0)
        const edited = yield* api.campaigns.update({ params, payload: { bodyDocument: { html: "<p>v2</p>" } } })
        expect(edited).toMatchObject({ status: "scheduled", bodyVersion: 2 })
        const later = new Date(at.getTime() + 60_000)
        expect((yield* api.campaigns.schedule({ params, payload: { scheduledAt: later } })).scheduledAt).toEqual(later)
        const response = yield* send(getWithKey(`/api/v0/marketing-campaigns/${params.campaignId}/schedule`, tenant.apiKey))
        expect(response.status).toBe(404)
        expect((yield* api.campaigns.cancel({ params, payload: null })).status).toBe("cancelled")
      }))

    it.effect("recipients: search, pages, most recent first; metrics over all; bad paging answers 400", () =>
      Effect.gen(function*() {
        const emails = Array.from({ length: 30 }, (_, i) => `user${String(i).padStart(2, "0")}@${i % 3 === 0 ? "Acme" : "other"}.com`)
        const { api, tenant, params } = yield* readyCampaign(emails)
        yield* api.campaigns.send({ params, payload: null })
        const firstPage = yield* api.campaigns.listRecipients({ params, query: { page: 1 } })
        expect(firstPage.items).toHaveLength(25)
        expect(firstPage.total).toBe(30)
        expect(firstPage.items[0].email).toBe("user29@other.com")
        const second = yield* api.campaigns.listRecipients({ params, query: { page: 2, pageSize: 25 } })
        expect(second.items.map((r) => r.email)).toEqual(emails.slice(0, 5).toReversed())
        const all = yield* api.campaigns.listRecipients({ params, query: {} })
        expect(all.items).toHaveLength(30)

        const acme = yield* api.campaigns.listRecipients({ params, query: { search: "aCmE", pageSize: 3 } })
        expect(acme.total).toBe(10)
        expect(acme.items.map((r) => r.email)).toEqual(["user27@Acme.com", "user24@Acme.com", "user21@Acme.com"])
        expect(acme.metrics.total).toBe(30)
        const literal = yield* api.campaigns.listRecipients({ params, query: { search: "user_" } })
        expect(literal.total).toBe(0)

        const base = `/api/v0/marketing-campaigns/${params.campaignId}/recipients`
        for (const query of ["pageSize=0", "pageSize=101", "page=0", "page=x", "pageSize=2.5"]) {
          expectErrorResponse(yield* send(getWithKey(`${base}?${query}`, tenant.apiKey)), 400, /page/)
        }
        const other = yield* seedTenant("other")
        const stranger = yield* client({ apiKey: other.apiKey })
        expect((yield* Effect.flip(stranger.campaigns.listRecipients({ params, query: {} })))._tag).toBe("NotFound")
      }))

    it.effect("a send to a thousand rows leaves the planner statistics the recipients page and its search are planned with", () =>
      Effect.gen(function*() {
        const { api, params } = yield* readyCampaign(Array.from({ length: 1_000 }, (_, i) => `reader${i}@example.com`))
        yield* api.campaigns.send({ params, payload: null })
        const sql = yield* SqlClient.SqlClient
        const analysed = yield* sql<{ readonly column: string }>`
          SELECT attname AS column FROM pg_stats WHERE tablename = 'campaign_recipients'`
        expect(analysed.map(({ column }) => column)).toEqual(expect.arrayContaining(["campaign_id", "email", "status"]))
      }))
  })
}
