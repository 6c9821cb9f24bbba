import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

/** Landing pages through the typed client: CRUD, versions and restore, publishing, company slugs, tenancy. */

const owner = (tenant: Tenant) => client({ apiKey: tenant.apiKey })

const bodyDocument = { html: "<h1>Spring sale</h1><p>Everything must go</p>", css: "h1{color:#c00}" }

describe.each(backends)("landing pages API on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("create, read, list, change and delete a page", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const page = yield* api.landingPages.create({ payload: { name: "Spring", slug: "spring", bodyDocument } })
        expect(page).toMatchObject({ name: "Spring", slug: "spring", status: "draft", bodyVersion: 1, url: null, thankYouUrl: null })
        expect(page.bodyDocument).toEqual(bodyDocument)
        expect(yield* api.landingPages.get({ params: { pageId: page.id } })).toEqual(page)

        const second = yield* api.landingPages.create({ payload: { name: "Empty", slug: "empty" } })
        expect(second).toMatchObject({ bodyVersion: 0, bodyDocument: { html: "" } })
        const listed = yield* api.landingPages.list({ query: {} })
        expect(listed.items.map((item) => item.id)).toEqual([second.id, page.id])
        expect(listed.total).toBe(2)

        const changed = yield* api.landingPages.update({
          params: { pageId: page.id },
          payload: { name: "Spring 2", thankYouUrl: "https://example.com/thanks" }
        })
        expect(changed).toMatchObject({ name: "Spring 2", bodyVersion: 1, thankYouUrl: "https://example.com/thanks" })
        const cleared = yield* api.landingPages.update({ params: { pageId: page.id }, payload: { thankYouUrl: null } })
        expect(cleared.thankYouUrl).toBeNull()

        yield* failsWith(
          api.landingPages.create({ payload: { name: "Again", slug: "spring" } }),
          "BadRequest",
          /field "slug": another landing page of the company is at "spring"/
        )
        yield* failsWith(
          api.landingPages.update({ params: { pageId: second.id }, payload: { slug: "spring" } }),
          "BadRequest",
          /"slug"/
        )

        expect((yield* api.landingPages.delete({ params: { pageId: page.id } })).id).toBe(page.id)
        yield* failsWith(api.landingPages.get({ params: { pageId: page.id } }), "NotFound", /not found/)
      }))

    it.effect("every body save is a version; a version can be read and restored", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const page = yield* api.landingPages.create({ payload: { name: "V", slug: "v", bodyDocument } })
        const edited = { html: "<h1>Summer</h1>" }
        const saved = yield* api.landingPages.update({ params: { pageId: page.id }, payload: { bodyDocument: edited } })
        expect(saved.bodyVersion).toBe(2)
        const versions = yield* api.landingPages.listVersions({ params: { pageId: page.id }, query: {} })
        expect(versions.items.map(({ version, source }) => ({ version, source }))).toEqual([
          { version: 2, source: "api" },
          { version: 1, source: "api" }
        ])
        const first = yield* api.landingPages.getVersion({ params: { pageId: page.id, version: 1 } })
        expect(first.bodyDocument).toEqual(bodyDocument)
        const restored = yield* api.landingPages.restoreVersion({ params: { pageId: page.id, version: 1 }, payload: null })
        expect(restored).toMatchObject({ bodyVersion: 3, bodyDocument })
        const after = yield* api.landingPages.listVersions({ params: { pageId: page.id }, query: {} })
        expect(after.items[0]).toMatchObject({ version: 3, source: "restore" })
        yield* failsWith(api.landingPages.getVersion({ params: { pageId: page.id, version: 9 } }), "NotFound", /Version 9/)
        yield* failsWith(
          api.landingPages.restoreVersion({ params: { pageId: page.id, version: 9 }, payload: null }),
          "NotFound"
        )
      }))

    it.effect("publish gives the page its public URL from the company's slug; unpublish takes it away", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("Acme Ünïted")
        const api = yield* owner(tenant)
        const company = (yield* api.companies.list({ query: {} })).items.find((item) => item.id === tenant.companyId)!
        expect(company.slug).toMatch(/^acme-united-company(-\d+)?$/)
        const page = yield* api.landingPages.create({ payload: { name: "P", slug: "promo", bodyDocument } })
        const published = yield* api.landingPages.publish({ params: { pageId: page.id }, payload: null })
        expect(published.status).toBe("published")
        expect(published.url).toBe(`http://127.0.0.1:3000/p/${company.slug}/promo`)
        expect(published.publishedAt).not.toBeNull()
        const draft = yield* api.landingPages.unpublish({ params: { pageId: page.id }, payload: {} })
        expect(draft).toMatchObject({ status: "draft", url: null, publishedAt: null })
        const direct = yield* api.landingPages.create({ payload: { name: "D", slug: "direct", status: "published" } })
        expect(direct.url).toMatch(/\/p\/.+\/direct$/)
      }))

    it.effect("companies of the same name get distinct slugs", () =>
      Effect.gen(function*() {
        const first = yield* seedTenant("Twin")
        const second = yield* seedTenant("Twin")
        const slugOf = (tenant: Tenant) =>
          Effect.map(owner(tenant), (api) => api.companies.list({ query: {} })).pipe(
            Effect.flatten,
            Effect.map((page) => page.items[0]!.slug)
          )
        const slugs = [yield* slugOf(first), yield* slugOf(second)]
        expect(slugs[0]).not.toBe(slugs[1])
        for (const slug of slugs) expect(slug).toMatch(/^twin-company(-\d+)?$/)
      }))

    it.effect("another company cannot read or change a page: 404", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const other = yield* owner(yield* seedTenant("other"))
        const page = yield* api.landingPages.create({ payload: { name: "Mine", slug: "mine", bodyDocument } })
        yield* failsWith(other.landingPages.get({ params: { pageId: page.id } }), "NotFound")
        yield* failsWith(other.landingPages.update({ params: { pageId: page.id }, payload: { name: "x" } }), "NotFound")
        yield* failsWith(other.landingPages.publish({ params: { pageId: page.id }, payload: null }), "NotFound")
        yield* failsWith(other.landingPages.listVersions({ params: { pageId: page.id }, query: {} }), "NotFound")
        yield* failsWith(other.landingPages.stats({ params: { pageId: page.id }, query: {} }), "NotFound")
        yield* failsWith(other.landingPages.delete({ params: { pageId: page.id } }), "NotFound")
        expect((yield* other.landingPages.list({ query: {} })).items).toEqual([])
        expect((yield* api.landingPages.get({ params: { pageId: page.id } })).name).toBe("Mine")
      }))

    it.effect("a viewer reads but cannot write", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const page = yield* (yield* owner(tenant)).landingPages.create({ payload: { name: "R", slug: "r" } })
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const api = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* api.landingPages.get({ params: { pageId: page.id } })).id).toBe(page.id)
        yield* failsWith(api.landingPages.publish({ params: { pageId: page.id }, payload: null }), "Forbidden", /viewer/)
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const post = (body: unknown) => send(requestWithKey("POST", "/api/v0/landing-pages", tenant.apiKey, body))
        expectErrorResponse(yield* post({ name: "x", slug: "Bad Slug" }), 400, /slug/)
        expectErrorResponse(yield* post({ name: "x", slug: "-edge" }), 400, /slug/)
        expectErrorResponse(yield* post({ slug: "ok" }), 400, /name/)
        expectErrorResponse(yield* post({ name: "x", slug: "ok", bodyDocument: {} }), 400, /html/)
        expectErrorResponse(yield* post({ name: "x", slug: "ok", thankYouUrl: "javascript:alert(1)" }), 400, /thankYouUrl/)
        expectErrorResponse(yield* post({ name: "x", slug: "ok", status: "live" }), 400, /status/)
        expectErrorResponse(yield* post({ name: "x", slug: "ok", nmae: "typo" }), 400, /nmae/)
        const page = (yield* post({ name: "x", slug: "ok" })).body as { readonly id: string }
        expectErrorResponse(
          yield* send(requestWithKey("GET", `/api/v0/landing-pages/${page.id}/stats?days=0`, tenant.apiKey)),
          400,
          /days/
        )
      }))
  })
})
