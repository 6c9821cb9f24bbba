import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Admin from "../../../src/accounts/admin/Admin.ts"
import { spend } from "../../support/Billing.ts"
import { addPerson, client, companyKeyBy, pgliteStorage, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

/** The organizations a person's personal key lists, as [organization id, role] pairs. */
const listed = (tenant: Tenant, personalAccessKey: string) =>
  Effect.gen(function*() {
    const api = yield* client({ apiKey: personalAccessKey, companyId: tenant.companyId })
    const { organizations } = yield* api.organizations.list()
    return organizations.map((organization) => [organization.id, organization.role])
  })

it.layer(testServer(pgliteStorage))("GET /api/v0/organizations", (it) => {
  it.effect("answers the caller's organizations with the spec's fields", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      expect(yield* api.organizations.list()).toEqual({
        organizations: [{
          id: tenant.organizationId,
          name: "tenant organization",
          role: "owner",
          subscriptionType: "pro",
          status: "active",
          creditLimit: Admin.bootstrapAllowance.creditLimit,
          creditUsage: 0,
          dataCreditLimit: Admin.bootstrapAllowance.dataCreditLimit,
          dataCreditUsage: 0,
          seats: Admin.bootstrapAllowance.seats,
          companyLimit: Admin.bootstrapAllowance.companyLimit
        }]
      })
    }))

  it.effect("shows the data credits a job search spent at once, beside the credits", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const usage = Effect.map(api.organizations.list(), ({ organizations }) =>
        organizations.map(({ creditUsage, dataCreditUsage }) => ({ creditUsage, dataCreditUsage })))
      expect(yield* usage).toEqual([{ creditUsage: 0, dataCreditUsage: 0 }])
      const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }
      yield* spend(payer, { feature: "jobs", credits: 1, pool: "data" })
      expect(yield* usage).toEqual([{ creditUsage: 0, dataCreditUsage: 1 }])
      yield* spend(payer, { feature: "chat", credits: 4 })
      yield* spend(payer, { feature: "jobs", credits: 1, pool: "data" })
      expect(yield* usage).toEqual([{ creditUsage: 4, dataCreditUsage: 2 }])
    }))

  it.effect("role: the membership role, else owner for the owner user, else admin for the owners list", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const id = tenant.organizationId
      const member = yield* addPerson(tenant, { companyRole: "viewer", organizationRole: "member" })
      expect(yield* listed(tenant, member.personalAccessKey)).toEqual([[id, "member"]])
      const admin = yield* addPerson(tenant, { companyRole: "viewer", organizationRole: "admin" })
      expect(yield* listed(tenant, admin.personalAccessKey)).toEqual([[id, "admin"]])

      const listedOwner = yield* addPerson(tenant, { companyRole: "viewer" })
      yield* Effect.orDie(Admin.addOwner(id, listedOwner.userId))
      expect(yield* listed(tenant, listedOwner.personalAccessKey)).toEqual([[id, "admin"]])

      const ownerUser = yield* addPerson(tenant, { companyRole: "viewer" })
      yield* Effect.orDie(Admin.setOwner(id, ownerUser.userId))
      expect(yield* listed(tenant, ownerUser.personalAccessKey)).toEqual([[id, "owner"]])
      // The owners list does not outrank the owner user.
      yield* Effect.orDie(Admin.addOwner(id, ownerUser.userId))
      expect(yield* listed(tenant, ownerUser.personalAccessKey)).toEqual([[id, "owner"]])
      // A membership row outranks both.
      yield* Effect.orDie(Admin.addMember(id, ownerUser.userId, "member"))
      yield* Effect.orDie(Admin.addMember(id, listedOwner.userId, "member"))
      expect(yield* listed(tenant, ownerUser.personalAccessKey)).toEqual([[id, "member"]])
      expect(yield* listed(tenant, listedOwner.personalAccessKey)).toEqual([[id, "member"]])
    }))

  it.effect("collaborating on a company, even as its owner, gives no organization", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const collaborator = yield* addPerson(tenant, { companyRole: "owner" })
      expect(yield* listed(tenant, collaborator.personalAccessKey)).toEqual([])
      const collaboratorsKey = yield* client({ apiKey: yield* companyKeyBy(tenant, collaborator.userId) })
      expect(yield* collaboratorsKey.organizations.list()).toEqual({ organizations: [] })
    }))

  it.effect("a company key lists its creator's organizations", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const companyKey = yield* client({ apiKey: tenant.apiKey })
      const listing = yield* companyKey.organizations.list()
      expect(listing.organizations.map((organization) => [organization.id, organization.role])).toEqual([[tenant.organizationId, "owner"]])
    }))

  it.effect("lists every organization with a record, and only those", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const other = yield* seedTenant("other")
      yield* seedTenant("unrelated")
      yield* Effect.orDie(Admin.addMember(other.organizationId, tenant.userId, "admin"))
      const organizations = yield* listed(tenant, tenant.personalAccessKey)
      expect(organizations).toEqual([[tenant.organizationId, "owner"], [other.organizationId, "admin"]])
    }))
})
