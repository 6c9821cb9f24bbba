import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Estimate, Spent } from "../../../src/accounts/usage/Credits.ts"
import { spend } from "../../support/Billing.ts"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, getWithKey, send } from "../../support/Http.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

const charge = (tenant: Tenant, userId: string | null, usage: Estimate & Spent) =>
  spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId }, usage)

/** A tenant with some billed calls: two users, three models, two features. */
const billedTenant = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const colleague = yield* addPerson(tenant, { companyRole: "member" })
  yield* charge(tenant, tenant.userId, { feature: "chat", model: "fast", credits: 1, inputTokens: 400, outputTokens: 100 })
  yield* charge(tenant, tenant.userId, { feature: "chat", model: "smart", credits: 5, inputTokens: 3_000, outputTokens: 1_000 })
  yield* charge(tenant, colleague.userId, { feature: "content", model: "smart", credits: 3, inputTokens: 2_000, outputTokens: 500 })
  yield* charge(tenant, null, { feature: "tasks", model: "balanced", credits: 2, inputTokens: 1_000, outputTokens: 0 })
  const other = yield* seedTenant("other")
  yield* charge(other, other.userId, { feature: "chat", model: "smart", credits: 50 })
  return { tenant, colleague, other }
})

it.layer(testServer(pgliteStorage))("organization usage", (it) => {
  it.effect("the summary totals every event of the organization and groups by model and feature, by credits descending", () =>
    Effect.gen(function*() {
      const { tenant } = yield* billedTenant
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const summary = yield* api.organizations.usageSummary({ params: { orgId: tenant.organizationId }, query: {} })
      expect(summary).toEqual({
        totals: { credits: 11, dataCredits: 0, tokens: 8_000, inputTokens: 6_400, outputTokens: 1_600, requests: 4 },
        byModel: [
          { model: "smart", feature: "", credits: 8, dataCredits: 0, tokens: 6_500, requests: 2 },
          { model: "balanced", feature: "", credits: 2, dataCredits: 0, tokens: 1_000, requests: 1 },
          { model: "fast", feature: "", credits: 1, dataCredits: 0, tokens: 500, requests: 1 }
        ],
        byFeature: [
          { model: "", feature: "chat", credits: 6, dataCredits: 0, tokens: 4_500, requests: 2 },
          { model: "", feature: "content", credits: 3, dataCredits: 0, tokens: 2_500, requests: 1 },
          { model: "", feature: "tasks", credits: 2, dataCredits: 0, tokens: 1_000, requests: 1 }
        ]
      })
      const window = yield* api.organizations.usageSummary({ params: { orgId: tenant.organizationId }, query: { limit: 1, offset: 1 } })
      expect(window.totals).toEqual(summary.totals)
      expect(window.byModel).toEqual([summary.byModel[1]])
      expect(window.byFeature).toEqual([summary.byFeature[1]])
    }))

  it.effect("the summary filters by user, feature key and an inclusive date window", () =>
    Effect.gen(function*() {
      const { tenant, colleague } = yield* billedTenant
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const totals = (query: Parameters<typeof api.organizations.usageSummary>[0]["query"]) =>
        Effect.map(api.organizations.usageSummary({ params: { orgId: tenant.organizationId }, query }), (summary) => summary.totals)
      expect(yield* totals({ userId: colleague.userId })).toMatchObject({ credits: 3, requests: 1 })
      expect(yield* totals({ featureKey: "chat" })).toMatchObject({ credits: 6, requests: 2 })
      expect(yield* totals({ featureKey: "chat", userId: colleague.userId })).toMatchObject({ credits: 0, requests: 0 })
      const today = new Date().toISOString().slice(0, 10)
      expect(yield* totals({ startDate: `${today}T00:00:00Z`, endDate: "2999-12-31T23:59:59.999Z" })).toMatchObject({ requests: 4 })
      expect(yield* totals({ startDate: "2999-01-01" })).toMatchObject({ credits: 0, requests: 0 })
      expect(yield* totals({ endDate: "2000-01-01T00:00:00+02:00" })).toMatchObject({ credits: 0, requests: 0 })
    }))

  it.effect("bad dates and windows answer 400 naming the parameter", () =>
    Effect.gen(function*() {
      const { tenant } = yield* billedTenant
      const path = `/api/v0/organizations/${tenant.organizationId}/usage/history/summary?companyId=${tenant.companyId}&`
      const cases = [
        ["startDate=yesterday", "\"startDate\""],
        ["startDate=2024-13-45", "\"startDate\""],
        ["endDate=2024-01-01T10:00:00%2B99", "\"endDate\""],
        ["limit=1001", "\"limit\""],
        ["limit=0", "\"limit\""],
        ["limit=lots", "\"limit\""],
        ["offset=-1", "\"offset\""],
        ["startDate=2024-02-01&endDate=2024-01-01", "startDate must not be after endDate"]
      ] as const
      for (const [query, message] of cases) {
        expectErrorResponse(yield* send(getWithKey(path + query, tenant.personalAccessKey)), 400, message)
      }
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const largest = yield* api.organizations.usageSummary({ params: { orgId: tenant.organizationId }, query: { limit: 1000 } })
      expect(largest.totals.requests).toBe(4)
    }))

  it.effect("history lists the events newest first in the generic envelope, paged and filtered", () =>
    Effect.gen(function*() {
      const { tenant, colleague } = yield* billedTenant
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const orgId = tenant.organizationId
      const all = yield* api.organizations.usageHistory({ params: { orgId }, query: {} })
      expect(all).toMatchObject({ total: 4, pages: 1, hasNext: false })
      expect(all.items.map((event) => [event.feature, event.model, event.credits])).toEqual([
        ["tasks", "balanced", 2],
        ["content", "smart", 3],
        ["chat", "smart", 5],
        ["chat", "fast", 1]
      ])
      expect(all.items[1]).toEqual({
        id: expect.stringMatching(/^use_/),
        companyId: tenant.companyId,
        userId: colleague.userId,
        feature: "content",
        model: "smart",
        pool: "credits",
        credits: 3,
        tokens: 2_500,
        inputTokens: 2_000,
        outputTokens: 500,
        createdDate: expect.any(Date)
      })
      const page = yield* api.organizations.usageHistory({ params: { orgId }, query: { page: 2, pageSize: 3 } })
      expect(page).toMatchObject({ total: 4, pages: 2, hasNext: false })
      expect(page.items.map((event) => event.credits)).toEqual([1])
      const firstPage = yield* api.organizations.usageHistory({ params: { orgId }, query: { pageSize: 3 } })
      expect(firstPage).toMatchObject({ pages: 2, hasNext: true })
      const mine = yield* api.organizations.usageHistory({ params: { orgId }, query: { userId: tenant.userId, featureKey: "chat" } })
      expect(mine.items.map((event) => event.credits)).toEqual([5, 1])
      const path = `/api/v0/organizations/${orgId}/usage/history?companyId=${tenant.companyId}&pageSize=101`
      expectErrorResponse(yield* send(getWithKey(path, tenant.personalAccessKey)), 400, "\"pageSize\"")
    }))

  it.effect("only organization owners and admins read usage: members 403, strangers and other organizations 404", () =>
    Effect.gen(function*() {
      const { tenant, other } = yield* billedTenant
      const orgId = tenant.organizationId
      const reads = (api: Effect.Success<ReturnType<typeof client>>): ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> => [
        api.organizations.usageSummary({ params: { orgId }, query: {} }),
        api.organizations.usageHistory({ params: { orgId }, query: {} })
      ]
      const admin = yield* addPerson(tenant, { companyRole: "viewer", organizationRole: "admin" })
      for (const read of reads(yield* client({ apiKey: admin.personalAccessKey, companyId: tenant.companyId }))) {
        expect(yield* read).toBeDefined()
      }
      const member = yield* addPerson(tenant, { companyRole: "owner", organizationRole: "member" })
      for (const read of reads(yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId }))) {
        yield* failsWith(read, "Forbidden", "Your organization role (member) cannot read the organization's usage; it needs one of: owner, admin")
      }
      const collaborator = yield* addPerson(tenant, { companyRole: "owner" })
      for (const read of reads(yield* client({ apiKey: collaborator.personalAccessKey, companyId: tenant.companyId }))) {
        yield* failsWith(read, "NotFound", `Organization ${orgId} not found`)
      }
      for (const read of reads(yield* client({ apiKey: other.personalAccessKey, companyId: other.companyId }))) {
        yield* failsWith(read, "NotFound", `Organization ${orgId} not found`)
      }
      // A company key reads as its creator: the bootstrap key as the organization owner, the collaborator's not at all.
      for (const read of reads(yield* client({ apiKey: tenant.apiKey }))) {
        expect(yield* read).toBeDefined()
      }
      for (const read of reads(yield* client({ apiKey: yield* companyKeyBy(tenant, collaborator.userId) }))) {
        yield* failsWith(read, "NotFound", `Organization ${orgId} not found`)
      }
      for (const read of reads(yield* client({ apiKey: other.apiKey }))) {
        yield* failsWith(read, "NotFound", orgId)
      }
      const owner = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      yield* failsWith(owner.organizations.usageSummary({ params: { orgId: "org_missing" }, query: {} }), "NotFound")
      yield* failsWith(owner.organizations.usageHistory({ params: { orgId: other.organizationId }, query: {} }), "NotFound")
    }))
})
