import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

const body = (html: string, extra: Record<string, unknown> = {}) => ({ html, ...extra })

for (const backend of backends) {
  // news@example.com is the service's MAIL_FROM here, so campaigns may send as it without a sending domain.
  it.layer(testServer(backend.storage, { mail: { from: "News <news@example.com>" } }))(`campaigns API on ${backend.name}`, (it) => {
    it.effect("create answers 201 with a draft; a body given is version 1, other builder fields kept", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const document = body("<p>Hi {{firstName}}</p>", { css: "p{}", components: [{ type: "text" }] })
        const campaign = yield* api.campaigns.create({
          payload: { name: "Spring", subject: "Hello", bodyDocument: document, fromEmail: "news@example.com" }
        })
        expect(campaign).toMatchObject({
          name: "Spring",
          subject: "Hello",
          status: "draft",
          bodyDocument: document,
          bodyVersion: 1,
          fromEmail: "news@example.com",
          fromName: null,
          listId: null,
          scheduledAt: null,
          startedAt: null,
          completedAt: null,
          companyId: tenant.companyId,
          userId: tenant.userId
        })
        expect(yield* api.campaigns.get({ params: { campaignId: campaign.id } })).toEqual(campaign)
        const versions = yield* api.campaigns.listVersions({ params: { campaignId: campaign.id }, query: {} })
        expect(versions.items.map((v) => [v.version, v.source])).toEqual([[1, "api"]])

        const bare = yield* api.campaigns.create({ payload: { name: "Bare", subject: "" } })
        expect(bare).toMatchObject({ bodyDocument: { html: "" }, bodyVersion: 0 })
        expect((yield* api.campaigns.listVersions({ params: { campaignId: bare.id }, query: {} })).total).toBe(0)
        const listed = yield* api.campaigns.list({ query: {} })
        expect(listed.items.map((c) => c.id)).toEqual([bare.id, campaign.id])
      }))

    it.effect("every body save is a new version; restore saves an old body as the next version", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
        const params = (campaignId: string) => ({ campaignId })
        const campaign = yield* api.campaigns.create({ payload: { name: "V", subject: "S", bodyDocument: body("one") } })
        expect(campaign.userId).toBe(tenant.userId)
        const renamed = yield* api.campaigns.update({ params: params(campaign.id), payload: { name: "V2" } })
        expect(renamed.bodyVersion).toBe(1)
        const second = yield* api.campaigns.update({ params: params(campaign.id), payload: { bodyDocument: body("two") } })
        expect(second).toMatchObject({ name: "V2", bodyVersion: 2, bodyDocument: { html: "two" } })
        const restored = yield* api.campaigns.restoreVersion({ params: { campaignId: campaign.id, version: 1 }, payload: null })
        expect(restored).toMatchObject({ bodyVersion: 3, bodyDocument: { html: "one" } })

        const versions = yield* api.campaigns.listVersions({ params: params(campaign.id), query: {} })
        expect(versions.items.map((v) => [v.version, v.source])).toEqual([[3, "restore"], [2, "api"], [1, "api"]])
        expect(versions).toMatchObject({ total: 3, pages: 1, hasNext: false })
        const two = yield* api.campaigns.getVersion({ params: { campaignId: campaign.id, version: 2 } })
        expect(two).toMatchObject({ version: 2, campaignId: campaign.id, bodyDocument: { html: "two" }, source: "api" })
        const missing = yield* Effect.flip(api.campaigns.getVersion({ params: { campaignId: campaign.id, version: 9 } }))
        expect(missing._tag).toBe("NotFound")
        const missingRestore = yield* Effect.flip(
          api.campaigns.restoreVersion({ params: { campaignId: campaign.id, version: 9 }, payload: {} })
        )
        expect(missingRestore._tag).toBe("NotFound")
      }))

    it.effect("PATCH clears nullable fields with null and leaves the others", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const campaign = yield* api.campaigns.create({
          payload: { name: "N", subject: "S", fromName: "Shop", replyTo: "r@example.com" }
        })
        const patched = yield* api.campaigns.update({
          params: { campaignId: campaign.id },
          payload: { fromName: null, subject: "New" }
        })
        expect(patched).toMatchObject({ fromName: null, replyTo: "r@example.com", subject: "New", name: "N" })
        expect(patched.updated_date.getTime()).toBeGreaterThan(campaign.updated_date.getTime())
      }))

    it.effect("bad bodies answer 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const campaign = yield* api.campaigns.create({ payload: { name: "B", subject: "S" } })
        const cases = [
          ["POST", "/api/v0/marketing-campaigns", { subject: "S" }, "name"],
          ["POST", "/api/v0/marketing-campaigns", { name: "x", subject: "a\r\nBcc: x@evil.com" }, "subject"],
          ["POST", "/api/v0/marketing-campaigns", { name: "x", subject: "S", fromEmail: "nope" }, "fromEmail"],
          ["POST", "/api/v0/marketing-campaigns", { name: "x", subject: "S", bodyDocument: { css: "" } }, "bodyDocument"],
          ["POST", "/api/v0/marketing-campaigns", { name: "x", subject: "S", bodyDocument: [1] }, "bodyDocument"],
          ["POST", "/api/v0/marketing-campaigns", {
            name: "x",
            subject: "S",
            bodyDocument: { html: "", css: "x".repeat(1_000_001) }
          }, "bodyDocument"],
          ["PATCH", `/api/v0/marketing-campaigns/${campaign.id}`, { bodyDocument: { html: 5 } }, "bodyDocument.html"],
          ["GET", `/api/v0/marketing-campaigns/${campaign.id}/versions/0`, undefined, "version"],
          ["GET", `/api/v0/marketing-campaigns/${campaign.id}/versions/x`, undefined, "version"]
        ] as const
        for (const [method, path, payload, field] of cases) {
          const response = yield* send(requestWithKey(method, path, tenant.apiKey, payload))
          expectErrorResponse(response, 400, field)
        }
      }))

    it.effect("roles: a viewer reads but cannot write; nobody reaches another company's campaign", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const api = yield* client({ apiKey: tenant.apiKey })
        const campaign = yield* api.campaigns.create({ payload: { name: "R", subject: "S", bodyDocument: body("x") } })
        const reader = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* reader.campaigns.get({ params: { campaignId: campaign.id } })).id).toBe(campaign.id)
        const denied = yield* Effect.flip(reader.campaigns.update({ params: { campaignId: campaign.id }, payload: { name: "n" } }))
        expect(denied._tag).toBe("Forbidden")

        const stranger = yield* client({ apiKey: other.apiKey })
        const params = { campaignId: campaign.id }
        const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
            stranger.campaigns.get({ params }),
            stranger.campaigns.update({ params, payload: { name: "mine" } }),
            stranger.campaigns.delete({ params }),
            stranger.campaigns.listVersions({ params, query: {} }),
            stranger.campaigns.getVersion({ params: { ...params, version: 1 } }),
          stranger.campaigns.restoreVersion({ params: { ...params, version: 1 }, payload: null })
        ]
        for (const attempt of attempts) {
          expect((yield* Effect.flip(attempt))._tag).toBe("NotFound")
        }
        const theirList = yield* stranger.lists.create({ payload: { name: "Theirs" } })
        const foreignList = yield* Effect.flip(
          api.campaigns.create({ payload: { name: "L", subject: "S", listId: theirList.id } })
        )
        expect(foreignList._tag).toBe("NotFound")
        const unknownList = yield* Effect.flip(api.campaigns.update({ params, payload: { listId: "lst_nope" } }))
        expect(unknownList._tag).toBe("NotFound")
        const anonymous = yield* client({})
        expect((yield* Effect.flip(anonymous.campaigns.list({ query: {} })))._tag).toBe("Unauthorized")
        expect((yield* api.campaigns.get({ params })).name).toBe("R")
      }))

    it.effect("DELETE removes a draft with its versions", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const campaign = yield* api.campaigns.create({ payload: { name: "D", subject: "S", bodyDocument: body("x") } })
        expect((yield* api.campaigns.delete({ params: { campaignId: campaign.id } })).id).toBe(campaign.id)
        const gone = yield* Effect.flip(api.campaigns.get({ params: { campaignId: campaign.id } }))
        expect(gone._tag).toBe("NotFound")
        const versions = yield* Effect.flip(api.campaigns.listVersions({ params: { campaignId: campaign.id }, query: {} }))
        expect(versions._tag).toBe("NotFound")
      }))
  })
}
