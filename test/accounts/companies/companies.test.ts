import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Admin from "../../../src/accounts/admin/Admin.ts"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, getWithKey, postJson, send } from "../../support/Http.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"

it.layer(testServer(pgliteStorage))("companies (/api/v0/companies)", (it) => {
  it.effect("GET lists the caller's companies in the generic envelope; a company key sees its own", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      yield* Effect.orDie(Admin.addCompanyUser(other.companyId, { userId: tenant.userId, role: "viewer" }))
      const personal = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const all = yield* personal.companies.list({ query: {} })
      expect(all).toEqual({
        items: [
          {
            id: tenant.companyId,
            name: "tenant company",
            organizationId: tenant.organizationId,
            slug: expect.stringMatching(/^tenant-company(-\d+)?$/),
            createdDate: expect.any(Date)
          },
          {
            id: other.companyId,
            name: "other company",
            organizationId: other.organizationId,
            slug: expect.stringMatching(/^other-company(-\d+)?$/),
            createdDate: expect.any(Date)
          }
        ],
        total: 2,
        pages: 1,
        hasNext: false
      })
      const firstPage = yield* personal.companies.list({ query: { pageSize: 1 } })
      expect(firstPage).toMatchObject({ items: [{ id: tenant.companyId }], total: 2, pages: 2, hasNext: true })
      const secondPage = yield* personal.companies.list({ query: { page: 2, pageSize: 1 } })
      expect(secondPage).toMatchObject({ items: [{ id: other.companyId }], total: 2, pages: 2, hasNext: false })
      const companyKey = yield* client({ apiKey: tenant.apiKey })
      expect(yield* companyKey.companies.list({ query: {} })).toMatchObject({ items: [{ id: tenant.companyId }], total: 1 })
      const response = yield* send(
        getWithKey("/api/v0/companies?pageSize=101", tenant.apiKey)
      )
      expectErrorResponse(response, 400, "\"pageSize\"")
    }))

  it.effect("POST creates a company in the caller's organization and makes the caller its owner", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const [created, response] = yield* api.companies.create({
        payload: { organizationId: tenant.organizationId, name: "Second shop" },
        responseMode: "decoded-and-response"
      })
      expect(response.status).toBe(201)
      expect(created).toMatchObject({ name: "Second shop", organizationId: tenant.organizationId })
      expect(created.id).toMatch(/^cmp_/)
      const there = yield* client({ apiKey: tenant.personalAccessKey, companyId: created.id })
      expect(yield* there.me.get()).toMatchObject({ companyId: created.id, role: "owner" })
      expect((yield* api.companies.list({ query: {} })).total).toBe(2)
    }))

  it.effect("POST within the company limit only (403 saying so)", () =>
    Effect.gen(function*() {
      const owner = yield* Effect.orDie(Admin.createUser({ email: `limited-${Date.now()}@example.com` }))
      const organization = yield* Admin.createOrganization({ name: "Small", companyLimit: 1 })
      yield* Effect.orDie(Admin.addMember(organization.id, owner.id, "owner"))
      const company = yield* Effect.orDie(Admin.createCompany(organization.id, "Only one"))
      yield* Effect.orDie(Admin.addCompanyUser(company.id, { userId: owner.id, role: "owner" }))
      const key = yield* Effect.orDie(Admin.createPersonalKey(owner.id, { name: "k" }))
      const api = yield* client({ apiKey: key.key, companyId: company.id })
      yield* failsWith(
        api.companies.create({ payload: { organizationId: organization.id, name: "Two" } }),
        "Forbidden",
        "Company limit reached: the organization's plan allows 1 companies"
      )
      expect((yield* api.companies.list({ query: {} })).total).toBe(1)
    }))

  it.effect("POST needs an organization owner or admin; members get 403, strangers and company keys of other organizations 404", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      const payload = { organizationId: tenant.organizationId, name: "New" }
      const admin = yield* addPerson(tenant, { companyRole: "member", organizationRole: "admin" })
      const adminApi = yield* client({ apiKey: admin.personalAccessKey, companyId: tenant.companyId })
      expect((yield* adminApi.companies.create({ payload })).organizationId).toBe(tenant.organizationId)
      const member = yield* addPerson(tenant, { companyRole: "owner", organizationRole: "member" })
      const memberApi = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      yield* failsWith(
        memberApi.companies.create({ payload }),
        "Forbidden",
        "Your organization role (member) cannot create companies in the organization; it needs one of: owner, admin"
      )
      // Owning a company gives no organization role at all.
      const collaborator = yield* addPerson(tenant, { companyRole: "owner" })
      const collaboratorApi = yield* client({ apiKey: collaborator.personalAccessKey, companyId: tenant.companyId })
      yield* failsWith(collaboratorApi.companies.create({ payload }), "NotFound", `Organization ${tenant.organizationId} not found`)
      const stranger = yield* client({ apiKey: other.personalAccessKey, companyId: other.companyId })
      yield* failsWith(stranger.companies.create({ payload }), "NotFound", tenant.organizationId)
      // A company key has its creator's organization role: the bootstrap key's is the organization owner's.
      const ownersKey = yield* client({ apiKey: tenant.apiKey })
      expect((yield* ownersKey.companies.create({ payload })).organizationId).toBe(tenant.organizationId)
      const collaboratorsKey = yield* client({ apiKey: yield* companyKeyBy(tenant, collaborator.userId) })
      yield* failsWith(collaboratorsKey.companies.create({ payload }), "NotFound", `Organization ${tenant.organizationId} not found`)
      const otherCompanyKey = yield* client({ apiKey: other.apiKey })
      yield* failsWith(otherCompanyKey.companies.create({ payload }), "NotFound", tenant.organizationId)
      yield* failsWith(adminApi.companies.create({ payload: { organizationId: "org_missing", name: "x" } }), "NotFound")
    }))

  it.effect("POST checks its body (400 naming the field)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const post = (body: unknown) => send(postJson("/api/v0/companies", body, tenant.apiKey))
      expectErrorResponse(yield* post({ organizationId: tenant.organizationId }), 400, "\"name\"")
      expectErrorResponse(yield* post({ organizationId: tenant.organizationId, name: " " }), 400, "\"name\"")
      expectErrorResponse(yield* post({ name: "x" }), 400, "\"organizationId\"")
    }))
})
