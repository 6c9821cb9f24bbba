import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Credits } from "../../../src/accounts/usage/Credits.ts"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, getWithKey, send } from "../../support/Http.ts"
import { startStubJobProvider, type StubJobProvider } from "../../support/StubJobProvider.ts"
import { addPerson, backends, client, seedTenant, type Tenant, testServer } from "../../support/TestServer.ts"
import { settledOrganization } from "../../support/Usage.ts"

class Stub extends Context.Service<Stub, StubJobProvider>()("test/StubJobProvider") {}

const providerKey = "serp-test-secret"

/** The service configured with the stub provider (real clock: retries wait for real). */
const serverWithProvider = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    const stub = yield* Effect.acquireRelease(Effect.promise(startStubJobProvider), (s) => Effect.promise(s.close))
    return testServer(storage, {
      jobs: { baseUrl: stub.url, apiKey: Option.some(Redacted.make(providerKey)), maxRetries: 2 }
    }).pipe(Layer.merge(Layer.succeed(Stub, stub)))
  }))

const organizationOf = (tenant: Tenant) =>
  Effect.map(settledOrganization(tenant.organizationId), Option.getOrThrow)

/** Leaves the tenant's organization `left` data credits, by spending the rest. */
const leaveDataCredits = (tenant: Tenant, left: number) =>
  Effect.gen(function*() {
    const organization = yield* organizationOf(tenant)
    const spend = organization.dataCreditLimit - organization.dataCreditUsage - left
    const credits = yield* Credits
    const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }
    const hold = yield* credits.hold(payer, { feature: "setup", credits: spend, pool: "data" })
    yield* credits.settle(hold, { credits: spend })
  })

describe.each(backends)("job search on $name", ({ storage }) => {
  it.layer(serverWithProvider(storage), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("forwards the query under the provider's names with the defaults, and answers its payload as is", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const before = stub.requests.length
        const results = yield* api.web.searchJobs({ query: { q: "barista new york" } })
        expect(stub.requests.slice(before)).toEqual([
          { q: "barista new york", gl: "us", hl: "en_us", engine: "google_jobs", api_key: providerKey }
        ])
        expect(results).toMatchObject({
          search_parameters: { engine: "google_jobs", q: "barista new york", gl: "us", hl: "en_us" },
          jobs_results: [
            { title: "barista new york #1.1", company_name: "Acme", location: "Anywhere", extensions: ["Full-time"] },
            { title: "barista new york #1.2" }
          ],
          serpapi_pagination: { next_page_token: "page-2" }
        })

        yield* api.web.searchJobs({
          query: { q: "nurse", gl: "DE", hl: "de", lrad: 25.5, ltype: "1", chips: "city:Berlin", uds: "ADV" }
        })
        expect(stub.requests.at(-1)).toEqual({
          q: "nurse", gl: "de", hl: "de", lrad: "25.5", ltype: "1", chips: "city:Berlin", uds: "ADV",
          engine: "google_jobs", api_key: providerKey
        })
      }))

    it.effect("the pagination token of one answer fetches the next page, to the last", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const titles: Array<string> = []
        let token: string | undefined
        for (let pages = 0; pages < 5; pages++) {
          const results: any = yield* api.web.searchJobs({ query: { q: "welder", nextPageToken: token } })
          titles.push(...results.jobs_results.map((job: { title: string }) => job.title))
          token = results.serpapi_pagination?.next_page_token
          if (token === undefined) break
        }
        expect(titles).toEqual(["welder #1.1", "welder #1.2", "welder #2.1", "welder #2.2", "welder #3.1", "welder #3.2"])
      }))

    it.effect("each successful call costs exactly 1 data credit under `jobs`; chat credits are untouched", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const before = yield* organizationOf(tenant)
        yield* api.web.searchJobs({ query: { q: "cook" } })
        yield* api.web.searchJobs({ query: { q: "[flaky] cook" } })
        const after = yield* organizationOf(tenant)
        expect(after.dataCreditUsage - before.dataCreditUsage).toBe(2)
        expect(after.creditUsage).toBe(before.creditUsage)
        // The usage report keeps the two balances apart: searches are data credits, never credits.
        const summary = yield* api.organizations.usageSummary({ params: { orgId: tenant.organizationId }, query: { featureKey: "jobs" } })
        expect(summary.totals).toMatchObject({ credits: 0, dataCredits: 2, requests: 2 })
        expect(summary.byFeature).toEqual([{ model: "", feature: "jobs", credits: 0, dataCredits: 2, tokens: 0, requests: 2 }])
        const history = yield* api.organizations.usageHistory({ params: { orgId: tenant.organizationId }, query: { featureKey: "jobs" } })
        expect(history.items.map((event) => [event.pool, event.credits])).toEqual([["data", 1], ["data", 1]])
      }))

    it.effect("a failed provider call costs nothing: 429 while it keeps rate limiting, 500 when down, 400 when it rejects", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const before = yield* organizationOf(tenant)
        const sent = stub.requests.length
        yield* failsWith(api.web.searchJobs({ query: { q: "[rate-limited] x" } }), "RateLimited", /rate limiting/)
        expect(stub.requests.length - sent).toBe(3)
        yield* failsWith(api.web.searchJobs({ query: { q: "[down] x" } }), "InternalError", /failed \(500\)/)
        yield* failsWith(api.web.searchJobs({ query: { q: "[reject] x" } }), "BadRequest", /Invalid next_page_token/)
        const after = yield* organizationOf(tenant)
        expect(after.dataCreditUsage).toBe(before.dataCreditUsage)
      }))

    it.effect("50 concurrent calls with 10 data credits left: exactly 10 are served and billed, the rest 403 before the provider", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const tenant = yield* seedTenant()
        yield* leaveDataCredits(tenant, 10)
        const api = yield* client({ apiKey: tenant.apiKey })
        const sent = stub.requests.length
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) =>
            Effect.match(api.web.searchJobs({ query: { q: `[slow] job ${i}` } }), {
              onSuccess: () => "served",
              onFailure: (error) => `${error._tag}: ${"error" in error ? error.error : ""}`
            }),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o === "served")).toHaveLength(10)
        expect(outcomes.filter((o) => o === "Forbidden: Insufficient data credits")).toHaveLength(40)
        expect(stub.requests.length - sent).toBe(10)
        const organization = yield* organizationOf(tenant)
        expect(organization.dataCreditUsage).toBe(organization.dataCreditLimit)
      }))

    it.effect("bad parameters answer 400 naming them, before the provider is asked", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const tenant = yield* seedTenant()
        const sent = stub.requests.length
        const cases = [
          ["/api/v0/web/jobs", "q"],
          ["/api/v0/web/jobs?q=", "q"],
          ["/api/v0/web/jobs?q=%20%20", "q"],
          ["/api/v0/web/jobs?q=x&lrad=far", "lrad"],
          ["/api/v0/web/jobs?q=x&lrad=-3", "lrad"],
          ["/api/v0/web/jobs?q=x&ltype=2", "ltype"],
          ["/api/v0/web/jobs?q=x&gl=usa", "gl"],
          ["/api/v0/web/jobs?q=x&gl=1a", "gl"]
        ] as const
        for (const [path, field] of cases) {
          expectErrorResponse(yield* send(getWithKey(path, tenant.apiKey)), 400, field)
        }
        expect(stub.requests.length).toBe(sent)
      }))

    it.effect("another company's id answers 404; a viewer's role 403; no credentials 401", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* failsWith(api.web.searchJobs({ query: { q: "x", companyId: other.companyId } }), "NotFound")
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const viewing = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(viewing.web.searchJobs({ query: { q: "x" } }), "Forbidden", /viewer/)
        yield* failsWith((yield* client({})).web.searchJobs({ query: { q: "x" } }), "Unauthorized")
      }))

    it.effect("the provider's key never reaches the client", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const response = yield* send(getWithKey("/api/v0/web/jobs?q=[reject]", tenant.apiKey))
        expect(response.text).not.toContain(providerKey)
      }))
  })
})

it.layer(testServer(backends[0].storage))("job search without a provider", (it) => {
  it.effect("answers 403 naming the setting to set (SERPAPI_API_KEY) and bills nothing", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      yield* failsWith(api.web.searchJobs({ query: { q: "x" } }), "Forbidden", /^Job search is not configured: set SERPAPI_API_KEY$/)
      expect((yield* organizationOf(tenant)).dataCreditUsage).toBe(0)
    }))
})
