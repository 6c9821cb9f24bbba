import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { currentDate } from "../../../src/platform/Time.ts"
import { expectErrorResponse, send } from "../../support/Http.ts"
import { backends, client, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

/**
 * The public side of landing pages over real HTTP: the served bytes
 * (sanitised), the security and cache headers, ETag revalidation, form
 * submissions making leads, the honeypot, the per-address rate limit and the
 * statistics they add up to.
 */

const hostile = `<h1 onclick="steal()">Offer</h1>
<script>alert("x")</script>
<img src="x.png" onerror="alert(1)" alt="pic">
<a href="javascript:alert(2)">click</a><a href="https://example.com/ok" target="_blank">ok</a>
<iframe src="https://evil.example"></iframe>
<form action="https://evil.example/collect" onsubmit="x()"><input name="email" type="email" required><button>Join</button></form>`

const owner = (tenant: Tenant) => client({ apiKey: tenant.apiKey })

/** A tenant with a published page; answers its public path. */
const publishedPage = (html: string, thankYouUrl?: string) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant("Pages")
    const api = yield* owner(tenant)
    const page = yield* api.landingPages.create({
      payload: { name: "Offer <page>", slug: "offer", bodyDocument: { html, css: "h1{color:red}</style><script>" }, thankYouUrl }
    })
    const published = yield* api.landingPages.publish({ params: { pageId: page.id }, payload: null })
    const path = new URL(published.url!).pathname
    return { tenant, api, page, path }
  })

/** A POST that does not follow redirects: the status, where it points, and the body. */
const post = (path: string, body: string, contentType: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(HttpServer.HttpServer, (server) => {
    const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
    return Effect.promise(() =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": contentType, ...headers },
        body
      }).then(async (response) => ({
        status: response.status,
        location: response.headers.get("location"),
        text: await response.text()
      }))
    )
  })

const leadsOf = (tenant: Tenant) => Effect.flatMap(owner(tenant), (api) => api.leads.list({ query: {} }))

describe.each(backends)("published landing pages on $name", ({ storage }) => {
  it.layer(testServer(storage, { pages: { submissionsPerMinute: 3 } }))((it) => {
    it.effect("serves the page sanitised, with a strict CSP, an ETag (304 on a match) and cache headers", () =>
      Effect.gen(function*() {
        const { path } = yield* publishedPage(hostile, "https://thanks.example/done")
        const response = yield* send(HttpClientRequest.get(path))
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toBe("text/html; charset=utf-8")
        const html = response.text
        expect(html).toContain("<h1>Offer</h1>")
        expect(html).not.toMatch(/<script/i)
        expect(html).not.toMatch(/\son\w+=/i)
        expect(html).not.toMatch(/javascript:/i)
        expect(html).not.toMatch(/<iframe/i)
        expect(html).not.toContain("evil.example")
        expect(html).toContain(`<img src="x.png" alt="pic" />`)
        expect(html).toContain(`<a href="https://example.com/ok" target="_blank" rel="noopener noreferrer">ok</a>`)
        expect(html).toContain(`<form action="${path}/submit" method="post">`)
        expect(html).toContain(`name="_hp"`)
        expect(html).toContain("<title>Offer &lt;page&gt;</title>")
        // The page's CSS cannot close its <style> element.
        expect(html).toContain("h1{color:red}\\3c /style>\\3c script>")

        const csp = response.headers["content-security-policy"]!
        expect(csp).toContain("script-src 'none'")
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).toContain("form-action 'self' https://thanks.example")
        expect(response.headers["x-content-type-options"]).toBe("nosniff")
        expect(response.headers["cache-control"]).toBe("public, max-age=60, must-revalidate")
        const etag = response.headers["etag"]!
        expect(etag).toMatch(/^"[\w-]+"$/)

        const again = yield* send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("if-none-match", etag)))
        expect(again.status).toBe(304)
        expect(again.text).toBe("")
        expect(again.headers["etag"]).toBe(etag)
        const weak = yield* send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("if-none-match", `"other", W/${etag}`)))
        expect(weak.status).toBe(304)
        const stale = yield* send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("if-none-match", `"other"`)))
        expect(stale.status).toBe(200)
      }))

    it.effect("a saved body is served at once with a new ETag; an unpublished, unknown or another company's slug is 404", () =>
      Effect.gen(function*() {
        const { api, page, path } = yield* publishedPage("<p>one</p>")
        const first = yield* send(HttpClientRequest.get(path))
        yield* api.landingPages.update({ params: { pageId: page.id }, payload: { bodyDocument: { html: "<p>two</p>" } } })
        const second = yield* send(HttpClientRequest.get(path))
        expect(second.text).toContain("<p>two</p>")
        expect(second.headers["etag"]).not.toBe(first.headers["etag"])

        const other = yield* publishedPage("<p>other</p>")
        const otherCompany = other.path.split("/")[2]
        expectErrorResponse(yield* send(HttpClientRequest.get(`/p/${otherCompany}/missing`)), 404)

        yield* api.landingPages.unpublish({ params: { pageId: page.id }, payload: null })
        expectErrorResponse(yield* send(HttpClientRequest.get(path)), 404, "Page not found")
        expect((yield* post(`${path}/submit`, "email=a%40example.com", "application/x-www-form-urlencoded")).status).toBe(404)
      }))

    it.effect("a form post makes a lead with a form_submitted activity and redirects to the thank-you URL", () =>
      Effect.gen(function*() {
        const { tenant, page, path } = yield* publishedPage(hostile, "https://thanks.example/done")
        const answer = yield* post(
          `${path}/submit`,
          "email=ada%40example.com&firstName=Ada&plan=pro&_hp=",
          "application/x-www-form-urlencoded"
        )
        expect(answer).toMatchObject({ status: 303, location: "https://thanks.example/done" })
        const leads = (yield* leadsOf(tenant)).items
        expect(leads).toHaveLength(1)
        expect(leads[0]).toMatchObject({ email: "ada@example.com", firstName: "Ada", fields: { plan: "pro" } })
        const api = yield* owner(tenant)
        const timeline = yield* api.leads.activities({ params: { leadId: leads[0]!.id }, query: {} })
        expect(timeline.items.map(({ type, pageId }) => ({ type, pageId }))).toEqual([{ type: "form_submitted", pageId: page.id }])
        const events = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ readonly payload: { readonly pageId: string; readonly email: string } }>`
            SELECT payload FROM event_outbox WHERE company_id = ${tenant.companyId} AND type = 'landing_page.submitted'`)
        expect(events.map((event) => event.payload)).toMatchObject([{ pageId: page.id, email: "ada@example.com" }])
      }))

    it.effect("JSON submissions work too; without a thank-you URL a thank-you page answers", () =>
      Effect.gen(function*() {
        const { tenant, path } = yield* publishedPage("<p>x</p>")
        const answer = yield* post(`${path}/submit`, JSON.stringify({ email: "grace@example.org", seats: 3 }), "application/json")
        expect(answer.status).toBe(200)
        expect(answer.text).toContain("Thank you")
        expect((yield* leadsOf(tenant)).items[0]).toMatchObject({ email: "grace@example.org", fields: { seats: "3" } })
      }))

    it.effect("a filled-in honeypot is answered the same but dropped", () =>
      Effect.gen(function*() {
        const { tenant, path } = yield* publishedPage("<p>x</p>", "https://thanks.example/done")
        const answer = yield* post(`${path}/submit`, "email=bot%40example.com&_hp=http%3A%2F%2Fspam", "application/x-www-form-urlencoded")
        expect(answer).toMatchObject({ status: 303, location: "https://thanks.example/done" })
        expect((yield* leadsOf(tenant)).items).toEqual([])
      }))

    it.effect("bad submissions answer 400 naming the field", () =>
      Effect.gen(function*() {
        const { path } = yield* publishedPage("<p>x</p>")
        const missing = yield* send(HttpClientRequest.post(`${path}/submit`).pipe(HttpClientRequest.bodyUrlParams({ name: "x" })))
        expectErrorResponse(missing, 400, `Invalid form field "email": is required`)
        const invalid = yield* send(HttpClientRequest.post(`${path}/submit`).pipe(HttpClientRequest.bodyUrlParams({ email: "nope" })))
        expectErrorResponse(invalid, 400, /"email": must be an email address/)
        const nested = yield* send(HttpClientRequest.post(`${path}/submit`).pipe(
          HttpClientRequest.bodyText(JSON.stringify({ email: "a@example.com", deep: { x: 1 } }), "application/json")
        ))
        expectErrorResponse(nested, 400, /deep/)
        const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, "v"]))
        const tooMany = yield* send(HttpClientRequest.post(`${path}/submit`).pipe(HttpClientRequest.bodyUrlParams({ ...many, email: "a@example.com" })))
        expectErrorResponse(tooMany, 400, /at most 50 fields/)
        const long = yield* send(HttpClientRequest.post(`${path}/submit`).pipe(
          HttpClientRequest.bodyUrlParams({ email: "a@example.com", note: "x".repeat(6_000) })
        ))
        expectErrorResponse(long, 400, /note/)
      }))

    it.effect("more than the per-minute submissions of one address to one page answer 429", () =>
      Effect.gen(function*() {
        const { path } = yield* publishedPage("<p>x</p>")
        const statuses: Array<number> = []
        for (let i = 0; i < 4; i++) {
          statuses.push((yield* post(`${path}/submit`, `email=p${i}%40example.com`, "application/x-www-form-urlencoded")).status)
        }
        expect(statuses).toEqual([200, 200, 200, 429])
      }))

    it.effect("views, unique visitors (by user agent and address) and submissions add up per day", () =>
      Effect.gen(function*() {
        const { api, page, path } = yield* publishedPage("<p>x</p>")
        const viewAs = (agent: string) => send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("user-agent", agent)))
        yield* viewAs("first")
        yield* viewAs("first")
        yield* viewAs("second")
        yield* post(`${path}/submit`, "email=v%40example.com", "application/x-www-form-urlencoded")
        const stats = yield* api.landingPages.stats({ params: { pageId: page.id }, query: { days: 7 } })
        expect(stats).toMatchObject({ views: 3, uniqueVisitors: 2, submissions: 1, conversionRate: 0.5 })
        expect(stats.perDay).toHaveLength(7)
        const today = (yield* currentDate).toISOString().slice(0, 10)
        expect(stats.perDay[6]).toMatchObject({ date: today, views: 3, uniqueVisitors: 2, submissions: 1 })
        expect(stats.perDay[0]).toMatchObject({ views: 0, uniqueVisitors: 0, submissions: 0 })
        const stored = yield* SqlClient.SqlClient.use((sql) => sql<{ readonly visitor: string }>`
          SELECT visitor FROM landing_page_visitors WHERE page_id = ${page.id}`)
        expect(stored).toHaveLength(2)
        for (const { visitor } of stored) expect(visitor).not.toContain("127.0.0.1")
      }))
  })
})
