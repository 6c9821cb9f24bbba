import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Leads } from "../../../src/outreach/leads/Leads.ts"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

const owner = (tenant: Tenant) => client({ apiKey: tenant.apiKey })

describe.each(backends)("leads API on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("create, read, change and delete a lead; addresses are unique ignoring case", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const lead = yield* api.leads.create({
          payload: {
            email: " Ada@Example.com ",
            firstName: "Ada",
            title: "Countess",
            tags: ["vip", "vip", "math"],
            fields: { plan: "pro", seats: 3, address: { city: "London" } }
          }
        })
        expect(lead).toMatchObject({
          email: "Ada@Example.com",
          firstName: "Ada",
          lastName: null,
          title: "Countess",
          tags: ["vip", "math"],
          status: "new",
          fields: { plan: "pro", seats: 3, address: { city: "London" } }
        })
        expect(yield* api.leads.get({ params: { leadId: lead.id } })).toEqual(lead)
        yield* failsWith(api.leads.create({ payload: { email: "ada@EXAMPLE.com" } }), "BadRequest", new RegExp(`already exists \\(${lead.id}\\)`))

        const changed = yield* api.leads.update({
          params: { leadId: lead.id },
          payload: { firstName: null, lastName: "Lovelace", status: "interested", tags: ["a"] }
        })
        expect(changed).toMatchObject({ firstName: null, lastName: "Lovelace", status: "interested", tags: ["a"] })
        expect(changed.updated_date > lead.updated_date).toBe(true)
        const timeline = yield* api.leads.activities({ params: { leadId: lead.id }, query: {} })
        expect(timeline.items.map(({ type, detail }) => ({ type, detail }))).toEqual([
          { type: "status_changed", detail: { from: "new", to: "interested" } }
        ])

        const other = yield* api.leads.create({ payload: { email: "grace@example.org" } })
        yield* failsWith(api.leads.update({ params: { leadId: other.id }, payload: { email: "ADA@example.com" } }), "BadRequest", /already exists/)
        expect((yield* api.leads.update({ params: { leadId: other.id }, payload: { email: "Grace@Example.org" } })).email)
          .toBe("Grace@Example.org")

        expect(yield* api.leads.delete({ params: { leadId: lead.id } })).toMatchObject({ id: lead.id })
        yield* failsWith(api.leads.get({ params: { leadId: lead.id } }), "NotFound")
        yield* failsWith(api.leads.activities({ params: { leadId: lead.id }, query: {} }), "NotFound")
      }))

    it.effect("the list filters by search, status and tag, newest first, paged", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        for (let i = 0; i < 5; i++) {
          yield* api.leads.create({
            payload: {
              email: `person${i}@example.com`,
              company: i % 2 === 0 ? "Acme Corp" : "Globex",
              tags: i < 2 ? ["hot"] : [],
              status: i === 4 ? "replied" : "new"
            }
          })
        }
        const all = yield* api.leads.list({ query: { pageSize: 2 } })
        expect(all).toMatchObject({ total: 5, pages: 3, hasNext: true })
        expect(all.items.map((lead) => lead.email)).toEqual(["person4@example.com", "person3@example.com"])
        expect((yield* api.leads.list({ query: { search: "ACME" } })).total).toBe(3)
        expect((yield* api.leads.list({ query: { search: "person1@" } })).items.map((lead) => lead.email))
          .toEqual(["person1@example.com"])
        expect((yield* api.leads.list({ query: { status: "replied" } })).items.map((lead) => lead.email))
          .toEqual(["person4@example.com"])
        expect((yield* api.leads.list({ query: { tag: "hot" } })).total).toBe(2)
        expect((yield* api.leads.list({ query: { tag: "hot", search: "acme" } })).total).toBe(1)
        expect((yield* api.leads.list({ query: { search: "100%_" } })).total).toBe(0)
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const deep = { a: { b: { c: { d: { e: 1 } } } } }
        const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
          [{ email: "not-an-address" }, /email.*valid e-mail/],
          [{ email: "a@example.com", status: "happy" }, /status/],
          [{ email: "a@example.com", fields: deep }, /fields.*nest deeper than 4/],
          [{ email: "a@example.com", fields: { "bad name": 1 } }, /fields/],
          [{ email: "a@example.com", fields: { big: "x".repeat(17_000) } }, /fields.*16384 bytes/],
          [{ email: "a@example.com", fields: [1] }, /fields/],
          [{ email: "a@example.com", tags: [""] }, /tags/],
          [{ email: "a@example.com", nmae: "x" }, /Unknown field "nmae"/]
        ]
        for (const [body, message] of cases) {
          expectErrorResponse(yield* send(requestWithKey("POST", "/api/v0/leads", tenant.apiKey, body)), 400, message)
        }
        expectErrorResponse(yield* send(requestWithKey("GET", "/api/v0/leads?status=x", tenant.apiKey)), 400, /status/)
      }))

    it.effect("another company's lead is 404 everywhere; a viewer reads but cannot write", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const theirs = yield* (yield* owner(yield* seedTenant("other"))).leads.create({ payload: { email: "x@example.com" } })
        const api = yield* owner(tenant)
        const params = { leadId: theirs.id }
        yield* failsWith(api.leads.get({ params }), "NotFound")
        yield* failsWith(api.leads.update({ params, payload: { firstName: "x" } }), "NotFound")
        yield* failsWith(api.leads.delete({ params }), "NotFound")
        yield* failsWith(api.leads.activities({ params, query: {} }), "NotFound")
        expect((yield* api.leads.list({ query: {} })).total).toBe(0)
        // The same address is a separate lead in each company.
        expect((yield* api.leads.create({ payload: { email: "X@example.com" } })).email).toBe("X@example.com")

        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const asViewer = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* asViewer.leads.list({ query: {} })).total).toBe(1)
        yield* failsWith(asViewer.leads.create({ payload: { email: "y@example.com" } }), "Forbidden")
      }))

    it.effect("the Leads service records events on the timeline, makes leads and moves their status", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const leads = yield* Leads
        const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 12, minutes))
        const known = yield* api.leads.create({ payload: { email: "known@example.com", firstName: "Known" } })
        yield* leads.record([
          { companyId: tenant.companyId, type: "sent", at: at(0), contact: { email: "KNOWN@example.com", firstName: "Other" }, campaignId: "cmp_1" },
          { companyId: tenant.companyId, type: "sent", at: at(0), contact: { email: "new@example.com", firstName: "Newt" }, sequenceId: "seq_1" },
          { companyId: tenant.companyId, type: "opened", at: at(1), contact: { email: "known@example.com" }, campaignId: "cmp_1" }
        ])
        const contacted = yield* api.leads.get({ params: { leadId: known.id } })
        // An event fills in what a lead lacks, never overwrites it.
        expect(contacted).toMatchObject({ status: "contacted", firstName: "Known" })
        const timeline = yield* api.leads.activities({ params: { leadId: known.id }, query: {} })
        expect(timeline.items.map(({ id: _, ...activity }) => activity)).toEqual([
          { type: "opened", at: at(1).toISOString(), campaignId: "cmp_1", detail: {} },
          { type: "status_changed", at: at(0).toISOString(), detail: { from: "new", to: "contacted" } },
          { type: "sent", at: at(0).toISOString(), campaignId: "cmp_1", detail: {} }
        ])
        const made = (yield* api.leads.list({ query: { search: "new@" } })).items[0]
        expect(made).toMatchObject({ email: "new@example.com", firstName: "Newt", status: "contacted" })

        // A later send does not move a lead back; a bounce and an unsubscribe do move it on.
        yield* api.leads.update({ params: { leadId: known.id }, payload: { status: "interested" } })
        yield* leads.record([{ companyId: tenant.companyId, type: "sent", at: at(2), contact: { email: "known@example.com" } }])
        expect((yield* api.leads.get({ params: { leadId: known.id } })).status).toBe("interested")
        yield* leads.record([
          { companyId: tenant.companyId, type: "unsubscribed", at: at(3), contact: { email: "known@example.com" } },
          { companyId: tenant.companyId, type: "bounced", at: at(3), contact: { email: "known@example.com" } }
        ])
        expect((yield* api.leads.get({ params: { leadId: known.id } })).status).toBe("unsubscribed")
        yield* leads.setStatus(tenant.companyId, { email: "known@example.com" }, "not_interested", { threadId: "thr_1" })
        const { items } = yield* api.leads.activities({ params: { leadId: known.id }, query: { pageSize: 100 } })
        expect(items.filter((activity) => activity.type === "status_changed").map((activity) => activity.detail)).toContainEqual(
          { from: "unsubscribed", to: "not_interested", threadId: "thr_1" }
        )
        expect((yield* api.leads.get({ params: { leadId: known.id } })).status).toBe("not_interested")
        // Another company's events never reach this company's leads.
        const other = yield* seedTenant("other")
        yield* leads.record([{ companyId: other.companyId, type: "sent", at: at(4), contact: { email: "known@example.com" } }])
        expect((yield* api.leads.activities({ params: { leadId: known.id }, query: {} })).total).toBe(timeline.total + 6)
      }))

    it.effect("list rows make leads of their people, filling in what existing leads lack", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const known = yield* api.leads.create({ payload: { email: "ada@example.com", firstName: "Ada", fields: { plan: "pro" } } })
        const list = yield* api.lists.create({
          payload: { name: "L", rows: [{ email: "ADA@example.com", firstName: "Other", lastName: "Lovelace", plan: "free", city: "London" }] }
        })
        yield* api.lists.appendRows({ params: { listId: list.id }, payload: { rows: [{ email: "grace@example.org", company: "Navy" }] } })
        expect(yield* api.leads.get({ params: { leadId: known.id } })).toMatchObject({
          email: "ada@example.com",
          firstName: "Ada",
          lastName: "Lovelace",
          fields: { plan: "pro", city: "London" }
        })
        const all = yield* api.leads.list({ query: {} })
        expect(all.items.map((lead) => [lead.email, lead.company, lead.status])).toEqual([
          ["grace@example.org", "Navy", "new"],
          ["ada@example.com", null, "new"]
        ])
      }))
  })
})
