import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Leads } from "../../../src/outreach/leads/Leads.ts"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { backends, client, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

const now = Date.parse("2026-06-01T08:00:00Z")
const day = 86_400_000

/** Three leads with names, tags, statuses, custom fields, and a timeline for Ada. */
const seed = (tenant: Tenant) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now)
    const api = yield* client({ apiKey: tenant.apiKey })
    yield* api.leads.create({
      payload: {
        email: "ada@example.com",
        firstName: "Ada",
        company: "Acme",
        tags: ["vip"],
        status: "contacted",
        fields: { plan: "pro", seats: 10, renewal: "2026-03-01" }
      }
    })
    yield* api.leads.create({ payload: { email: "bob@example.org", company: "Globex", fields: { plan: "free", seats: 2 } } })
    yield* api.leads.create({ payload: { email: "carol@example.com", tags: ["vip", "beta"], status: "replied" } })
    const leads = yield* Leads
    yield* leads.record([
      { companyId: tenant.companyId, type: "opened", at: new Date(now - 2 * day), contact: { email: "ada@example.com" }, campaignId: "cmp_1" },
      { companyId: tenant.companyId, type: "opened", at: new Date(now - 40 * day), contact: { email: "carol@example.com" }, campaignId: "cmp_1" }
    ])
    return api
  })

const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<string>]> = [
  ["contains ignores case", { field: "email", op: "contains", value: "EXAMPLE.COM" }, ["ada", "carol"]],
  ["eq ignores case", { field: "company", op: "eq", value: "acme" }, ["ada"]],
  ["neq keeps leads without the field", { field: "company", op: "neq", value: "Acme" }, ["bob", "carol"]],
  ["in over statuses", { field: "status", op: "in", value: ["new", "replied"] }, ["bob", "carol"]],
  ["exists", { field: "company", op: "exists" }, ["ada", "bob"]],
  ["exists false", { field: "company", op: "exists", value: false }, ["carol"]],
  ["a tag", { field: "tags", op: "eq", value: "vip" }, ["ada", "carol"]],
  ["not a tag", { field: "tags", op: "neq", value: "vip" }, ["bob"]],
  ["any of tags", { field: "tags", op: "in", value: ["beta", "nope"] }, ["carol"]],
  ["a tag containing", { field: "tags", op: "contains", value: "ET" }, ["carol"]],
  ["no tags", { field: "tags", op: "exists", value: false }, ["bob"]],
  ["a custom string", { field: "fields.plan", op: "eq", value: "PRO" }, ["ada"]],
  ["a custom number", { field: "fields.seats", op: "eq", value: 10 }, ["ada"]],
  ["a custom date", { field: "fields.renewal", op: "before", value: "2026-04-01" }, ["ada"]],
  ["a custom field present", { field: "fields.plan", op: "exists" }, ["ada", "bob"]],
  ["created after", { field: "createdAt", op: "after", value: "2026-05-01T00:00:00Z" }, ["ada", "bob", "carol"]],
  ["created before", { field: "createdAt", op: "before", value: "2026-05-01T00:00:00Z" }, []],
  ["opened within a week", { activity: "opened", op: "within", days: 7 }, ["ada"]],
  ["not opened within a week", { activity: "opened", op: "not_within", days: 7 }, ["bob", "carol"]],
  ["opened within 60 days of cmp_1", { activity: "opened", op: "within", days: 60, campaignId: "cmp_1" }, ["ada", "carol"]],
  ["opened of another campaign", { activity: "opened", op: "within", days: 60, campaignId: "cmp_2" }, []],
  ["status changes count as activities", { activity: "status_changed", op: "within", days: 1 }, []]
]

const names = (emails: ReadonlyArray<{ readonly email: string }>) => emails.map((lead) => lead.email.split("@")[0]).sort()

describe.each(backends)("smart lists on $name", ({ storage }) => {
  it.layer(testServer(onLiveClock(storage)))((it) => {
    it.effect("each op over fields, tags, custom fields, dates and the timeline", () =>
      Effect.gen(function*() {
        const api = yield* seed(yield* seedTenant())
        for (const [name, condition, expected] of cases) {
          const list = yield* api.smartLists.create({ payload: { name, filter: { all: [condition] } } })
          const page = yield* api.smartLists.leads({ params: { smartListId: list.id }, query: { pageSize: 100 } })
          expect([name, names(page.items)]).toEqual([name, [...expected].sort()])
          expect(page.total).toBe(expected.length)
        }
      }))

    it.effect("groups nest: any of a status or (a tag and a company); pages newest first", () =>
      Effect.gen(function*() {
        const api = yield* seed(yield* seedTenant())
        const filter = {
          any: [
            { field: "status", op: "eq", value: "new" },
            { all: [{ field: "tags", op: "eq", value: "vip" }, { field: "company", op: "exists" }] }
          ]
        }
        const list = yield* api.smartLists.create({ payload: { name: "Nested", filter } })
        expect(list).toMatchObject({ name: "Nested", filter })
        const first = yield* api.smartLists.leads({ params: { smartListId: list.id }, query: { pageSize: 1 } })
        expect(first.hasNext).toBe(true)
        expect(first.items.map((lead) => lead.email)).toEqual(["bob@example.org"])
        const second = yield* api.smartLists.leads({ params: { smartListId: list.id }, query: { page: 2, pageSize: 1 } })
        expect(second).toMatchObject({ total: 2, pages: 2, hasNext: false })
        expect(second.items.map((lead) => lead.email)).toEqual(["ada@example.com"])

        const renamed = yield* api.smartLists.update({
          params: { smartListId: list.id },
          payload: { name: "Renamed", filter: { all: [{ field: "firstName", op: "eq", value: "ada" }] } }
        })
        expect(renamed.name).toBe("Renamed")
        expect(names((yield* api.smartLists.leads({ params: { smartListId: list.id }, query: {} })).items)).toEqual(["ada"])
        expect((yield* api.smartLists.list({ query: {} })).items.map((l) => l.id)).toEqual([list.id])
        yield* api.smartLists.delete({ params: { smartListId: list.id } })
        yield* failsWith(api.smartLists.get({ params: { smartListId: list.id } }), "NotFound")
      }))

    it.effect("pages walk every matching lead once, newest first; the last page's total is exact", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const leads = yield* Leads
        yield* leads.upsert(
          tenant.companyId,
          Array.from({ length: 12 }, (_, i) => ({ email: `p${i}@example.com`, tags: i % 4 === 3 ? ["cold"] : ["vip"] }))
        )
        const list = yield* api.smartLists.create({ payload: { name: "VIP", filter: { all: [{ field: "tags", op: "eq", value: "vip" }] } } })
        const newestFirst = (yield* api.leads.list({ query: { tag: "vip", pageSize: 100 } })).items.map((lead) => lead.id)
        expect(newestFirst).toHaveLength(9)
        const walked: Array<string> = []
        for (let page = 1; page <= 3; page++) {
          const answer = yield* api.smartLists.leads({ params: { smartListId: list.id }, query: { page, pageSize: 4 } })
          walked.push(...answer.items.map((lead) => lead.id))
          expect(answer).toMatchObject({ total: 9, pages: 3, hasNext: page < 3 })
        }
        expect(walked).toEqual(newestFirst)
        const past = yield* api.smartLists.leads({ params: { smartListId: list.id }, query: { page: 5, pageSize: 4 } })
        expect(past).toMatchObject({ items: [], hasNext: false })
      }))

    it.effect("a thousand leads and activities written leave the planner statistics smart lists are planned with", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const leads = yield* Leads
        const contacts = Array.from({ length: 1_000 }, (_, i) => ({ email: `s${i}@example.com`, tags: [i % 2 === 0 ? "vip" : "cold"] }))
        yield* leads.upsert(tenant.companyId, contacts)
        yield* leads.record(contacts.map((contact) => ({ companyId: tenant.companyId, type: "opened" as const, at: new Date(now), contact })))
        const sql = yield* SqlClient.SqlClient
        const analysed = yield* sql<{ readonly table: string; readonly column: string }>`
          SELECT tablename AS table, attname AS column FROM pg_stats WHERE tablename IN ('leads', 'lead_activities')`
        const columns = analysed.map(({ column, table }) => `${table}.${column}`)
        expect(columns).toEqual(expect.arrayContaining(["leads.status", "leads.tags", "lead_activities.type", "lead_activities.at"]))
      }))

    it.effect("a bad filter answers 400 naming the path of the bad condition", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const ok = { field: "email", op: "eq", value: "a@example.com" }
        const nest = (levels: number): unknown => levels === 0 ? ok : { all: [nest(levels - 1)] }
        const bad: ReadonlyArray<readonly [unknown, RegExp]> = [
          [{ all: [ok, ok, { field: "email", op: "like", value: "x" }] }, /^Invalid filter at filter\.all\[2\]\.op: /],
          [{ all: [{ any: [ok, { field: "nope", op: "eq", value: "x" }] }] }, /filter\.all\[0\]\.any\[1\]\.field: unknown field "nope"/],
          [{ all: [{ field: "status", op: "eq", value: "happy" }] }, /filter\.all\[0\]\.value: a status is one of/],
          [{ all: [{ field: "email", op: "before", value: "2026-01-01" }] }, /filter\.all\[0\]\.op/],
          [{ all: [{ field: "createdAt", op: "after", value: "yesterday" }] }, /filter\.all\[0\]\.value: must be an ISO 8601 date/],
          [{ all: [{ field: "email", op: "in", value: "x" }] }, /filter\.all\[0\]\.value: in takes an array/],
          [{ all: [{ field: "email", op: "eq" }] }, /filter\.all\[0\]\.value: "eq" needs a value/],
          [{ all: [{ field: "fields.bad name", op: "exists" }] }, /filter\.all\[0\]\.field/],
          [{ all: [{ activity: "sent", op: "within", days: 0 }] }, /filter\.all\[0\]\.days/],
          [{ all: [{ activity: "sent", op: "eq", days: 3 }] }, /filter\.all\[0\]\.op/],
          [{ all: [{ ...ok, extra: 1 }] }, /filter\.all\[0\]\.extra: unknown field/],
          [{ any: [] }, /filter\.any: a group needs at least one condition/],
          [{ all: [ok], any: [ok] }, /^Invalid filter at filter/],
          [{ all: ["x"] }, /filter\.all\[0\]: expected an object/],
          [{ where: 1 }, /^Invalid filter at filter: expected \{all/],
          [nest(12), /filter(\.all\[0\]){8}: groups nest at most 8 levels deep/],
          [{ all: Array.from({ length: 101 }, () => ok) }, /filter\.all\[100\]: a filter holds at most 100 conditions/]
        ]
        for (const [filter, message] of bad) {
          const response = yield* send(requestWithKey("POST", "/api/v0/smart-lists", tenant.apiKey, { name: "Bad", filter }))
          expectErrorResponse(response, 400, message)
        }
        // 100 levels: refused before parsing, as any JSON that deep.
        const deep = yield* send(requestWithKey("POST", "/api/v0/smart-lists", tenant.apiKey, { name: "Deep", filter: nest(100) }))
        expectErrorResponse(deep, 400, /nest deeper than 64 levels/)
        const api = yield* client({ apiKey: tenant.apiKey })
        const list = yield* api.smartLists.create({ payload: { name: "Good", filter: { all: [ok] } } })
        const patch = yield* send(
          requestWithKey("PATCH", `/api/v0/smart-lists/${list.id}`, tenant.apiKey, { filter: { all: [{ field: "x", op: "eq", value: 1 }] } })
        )
        expectErrorResponse(patch, 400, /filter\.all\[0\]\.field/)
        expect((yield* api.smartLists.list({ query: {} })).total).toBe(1)
      }))

    it.effect("another company's smart list is 404; a smart list never returns another company's leads", () =>
      Effect.gen(function*() {
        const mine = yield* seedTenant()
        const api = yield* seed(mine)
        const other = yield* seedTenant("other")
        const theirs = yield* seed(other)
        const everyone = { all: [{ field: "email", op: "contains", value: "@" }] }
        const theirList = yield* theirs.smartLists.create({ payload: { name: "Theirs", filter: everyone } })
        const params = { smartListId: theirList.id }
        yield* failsWith(api.smartLists.get({ params }), "NotFound")
        yield* failsWith(api.smartLists.leads({ params, query: {} }), "NotFound")
        yield* failsWith(api.smartLists.update({ params, payload: { name: "x" } }), "NotFound")
        yield* failsWith(api.smartLists.delete({ params }), "NotFound")
        const myList = yield* api.smartLists.create({ payload: { name: "Mine", filter: everyone } })
        const page = yield* api.smartLists.leads({ params: { smartListId: myList.id }, query: { pageSize: 100 } })
        const myLeads = yield* api.leads.list({ query: { pageSize: 100 } })
        expect(page.total).toBe(3)
        expect(page.items.map((lead) => lead.id).sort()).toEqual(myLeads.items.map((lead) => lead.id).sort())
        expect((yield* api.smartLists.list({ query: {} })).items.map((l) => l.id)).toEqual([myList.id])
      }))
  })
})
