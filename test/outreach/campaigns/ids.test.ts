import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { newDraft } from "../../../src/outreach/campaigns/Campaigns.ts"
import { CampaignsRepo } from "../../../src/outreach/campaigns/CampaignsRepo.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

for (const backend of backends) {
  it.layer(testServer(backend.storage))(`campaign ids on ${backend.name}`, (it) => {
    it.effect("a new campaign's id has its own prefix, not the companies' `cmp_`", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const campaign = yield* api.campaigns.create({ payload: { name: "Spring", subject: "Hello" } })
        expect(campaign.id).toMatch(/^cpg_[0-9a-f]{32}$/)
        expect(tenant.companyId).toMatch(/^cmp_/)
      }))

    it.effect("a campaign created before, with a `cmp_` id, is still read, changed and deleted by that id", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const draft = newDraft(tenant.companyId, tenant.userId, { name: "Older", subject: "Hi" }, new Date())
        const older = { ...draft, id: draft.id.replace(/^cpg_/, "cmp_") }
        yield* CampaignsRepo.use((repo) => repo.create(older, "api"))
        expect((yield* api.campaigns.get({ params: { campaignId: older.id } })).name).toBe("Older")
        expect((yield* api.campaigns.update({ params: { campaignId: older.id }, payload: { name: "Renamed" } })).name).toBe("Renamed")
        expect((yield* api.campaigns.list({ query: {} })).items.map((campaign) => campaign.id)).toContain(older.id)
        yield* api.campaigns.delete({ params: { campaignId: older.id } })
        expect((yield* api.campaigns.list({ query: {} })).items).toEqual([])
      }))
  })
}
