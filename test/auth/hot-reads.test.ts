import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as Admin from "../../src/accounts/admin/Admin.ts"
import { CompaniesRepo } from "../../src/accounts/companies/CompaniesRepo.ts"
import { OrganizationsRepo } from "../../src/accounts/organizations/OrganizationsRepo.ts"
import { spend } from "../support/Billing.ts"
import { getWithKey, send } from "../support/Http.ts"
import { settled } from "../support/Usage.ts"
import { addPerson, backends, client, pgliteStorage, postgresStorage, postgresUrl, seedTenant, serversSharingPostgres, testServer, type StorageServices, type Tenant } from "../support/TestServer.ts"

/**
 * The cached reads (`GET /organizations`, `GET /company_users/{companyId}`)
 * after every kind of write that changes them: the next read shows the write,
 * on every backend and, on PostgreSQL, through another server process.
 */

const payer = (tenant: Tenant) => ({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId })

/** A person's organizations as [id, role, creditUsage], by id. */
const organizationsOf = (tenant: Tenant, personalAccessKey: string) =>
  Effect.gen(function*() {
    const api = yield* client({ apiKey: personalAccessKey, companyId: tenant.companyId })
    const { organizations } = yield* api.organizations.list()
    return organizations.map((organization) => [organization.id, organization.role, organization.creditUsage])
      .sort(([a], [b]) => String(a).localeCompare(String(b)))
  })

/** The company's users as [user id, role], and the total, through the company key. */
const companyUsersOf = (tenant: Tenant, query: { readonly page?: number; readonly pageSize?: number } = {}) =>
  Effect.gen(function*() {
    const api = yield* client({ apiKey: tenant.apiKey })
    const listing = yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query })
    return {
      users: listing.company_users.map((user) => [user.uid, user.role]),
      total: listing.pagination.total
    }
  })

const byId = <A extends ReadonlyArray<unknown>>(rows: ReadonlyArray<A>) =>
  [...rows].sort(([a], [b]) => String(a).localeCompare(String(b)))

/** A running test server's services: writes go through one, reads through another (or the same). */
type ServerServices = Layer.Success<ReturnType<typeof testServer<StorageServices, unknown>>>
type Server = Context.Context<ServerServices>

/** Every write that changes an organization listing, made through `writer`, each followed by a read through `reader`. */
const organizationWrites = (tenant: Tenant, writer: Server, reader: Server) =>
  Effect.gen(function*() {
    const write = <A, E>(effect: Effect.Effect<A, E, ServerServices>) => Effect.provideContext(effect, writer)
    const read = (key: string) => Effect.provideContext(organizationsOf(tenant, key), reader)
    const person = yield* write(addPerson(tenant, { companyRole: "viewer" }))
    const organization = tenant.organizationId
    expect(yield* read(person.personalAccessKey)).toEqual([])
    yield* write(Effect.orDie(Admin.addMember(organization, person.userId, "member")))
    expect(yield* read(person.personalAccessKey)).toEqual([[organization, "member", 0]])
    yield* write(Effect.orDie(Admin.addMember(organization, person.userId, "admin")))
    expect(yield* read(person.personalAccessKey)).toEqual([[organization, "admin", 0]])

    // A billed call shows everywhere once its process committed it (settlements are committed in groups).
    yield* write(Effect.andThen(spend(payer(tenant), { feature: "test", credits: 7 }), settled))
    expect(yield* read(person.personalAccessKey)).toEqual([[organization, "admin", 7]])
    yield* write(Effect.andThen(spend(payer(tenant), { feature: "test", credits: 5 }), settled))
    expect(yield* read(person.personalAccessKey)).toEqual([[organization, "admin", 12]])

    const listed = yield* write(Admin.createOrganization({ name: "listed" }))
    yield* write(Effect.orDie(Admin.addOwner(listed.id, person.userId)))
    expect(yield* read(person.personalAccessKey)).toEqual(byId([[organization, "admin", 12], [listed.id, "admin", 0]]))
    const owned = yield* write(Admin.createOrganization({ name: "owned" }))
    yield* write(Effect.orDie(Admin.setOwner(owned.id, person.userId)))
    expect(yield* read(person.personalAccessKey)).toEqual(
      byId([[organization, "admin", 12], [listed.id, "admin", 0], [owned.id, "owner", 0]])
    )
  })

/** Every write that changes a company's user pages, made through `writer`, each followed by a read through `reader`. */
const companyUserWrites = (tenant: Tenant, writer: Server, reader: Server) =>
  Effect.gen(function*() {
    const write = <A, E>(effect: Effect.Effect<A, E, ServerServices>) => Effect.provideContext(effect, writer)
    const read = (query?: { readonly page?: number; readonly pageSize?: number }) =>
      Effect.provideContext(companyUsersOf(tenant, query), reader)
    const owner = yield* write(client({ apiKey: tenant.apiKey }))
    const companyId = tenant.companyId
    expect(yield* read()).toEqual({ users: [[tenant.userId, "owner"]], total: 1 })
    expect(yield* read({ page: 2, pageSize: 1 })).toEqual({ users: [], total: 1 })

    const added = yield* owner.companyUsers.add({
      params: { companyId },
      payload: { email: `added-${Date.now()}-${Math.random()}@example.com`, role: "member" }
    })
    expect(yield* read()).toEqual({ users: [[tenant.userId, "owner"], [added.uid, "member"]], total: 2 })
    expect(yield* read({ page: 2, pageSize: 1 })).toEqual({ users: [[added.uid, "member"]], total: 2 })

    yield* owner.companyUsers.update({ params: { companyId, userId: added.uid }, payload: { role: "viewer" } })
    expect(yield* read()).toEqual({ users: [[tenant.userId, "owner"], [added.uid, "viewer"]], total: 2 })

    const person = yield* write(addPerson(tenant, { companyRole: "admin" }))
    expect((yield* read()).users).toContainEqual([person.userId, "admin"])
    expect((yield* read()).total).toBe(3)

    yield* owner.companyUsers.remove({ params: { companyId, userId: added.uid } })
    expect(yield* read()).toEqual({ users: [[tenant.userId, "owner"], [person.userId, "admin"]], total: 2 })
    expect(yield* read({ page: 2, pageSize: 1 })).toEqual({ users: [[person.userId, "admin"]], total: 2 })
  })

for (const backend of backends) {
  it.layer(testServer(backend.storage))(`cached reads on ${backend.name}`, (it) => {
    it.effect("GET /organizations shows every membership, ownership and credit change on the next read", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const server = yield* Effect.context<ServerServices>()
        yield* organizationWrites(tenant, server, server)
      }))

    it.effect("GET /company_users shows every added, changed and removed company user on the next read", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const server = yield* Effect.context<ServerServices>()
        yield* companyUserWrites(tenant, server, server)
      }))
  })
}

/** Two server processes on one PostgreSQL; without TEST_DATABASE_URL it is left out (test/support prints the notice). */
const sharedStores = postgresUrl === undefined ? [] : ["postgres"]

describe.each(sharedStores)("cached reads across processes on %s", () => {
  it.effect("a write through one server shows on the other's very next organizations read", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      yield* organizationWrites(tenant, first, second)
    }))

  it.effect("a write through one server shows on the other's very next company users read", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      yield* companyUserWrites(tenant, first, second)
    }))
})

/** Storage whose listings count how often they reach the repository. */
const reads = { organizations: 0, companyUsers: 0, creditUsage: 0 }
const counting = <A, E>(storage: Layer.Layer<A, E>) => Layer.mergeAll(
  Layer.effect(
    OrganizationsRepo,
    OrganizationsRepo.useSync((repo) => ({
      ...repo,
      listForUser: (userId) => Effect.suspend(() => (reads.organizations++, repo.listForUser(userId))),
      creditUsage: (ids) => Effect.suspend(() => (reads.creditUsage++, repo.creditUsage(ids)))
    }))
  ),
  Layer.effect(
    CompaniesRepo,
    CompaniesRepo.useSync((repo) => ({
      ...repo,
      listUsers: (companyId, query) => Effect.suspend(() => (reads.companyUsers++, repo.listUsers(companyId, query)))
    }))
  )
).pipe(Layer.provideMerge(storage))

it.layer(testServer(counting(pgliteStorage)))("credit usage on the embedded database", (it) => {
  it.effect("is read once, then from memory until a billed call changes it, which the next read shows", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const before = reads.creditUsage
      for (let i = 0; i < 3; i++) {
        expect(yield* organizationsOf(tenant, tenant.personalAccessKey)).toEqual([[tenant.organizationId, "owner", 0]])
      }
      expect(reads.creditUsage - before).toBe(1)
      yield* spend(payer(tenant), { feature: "test", credits: 3 })
      for (let i = 0; i < 3; i++) {
        expect(yield* organizationsOf(tenant, tenant.personalAccessKey)).toEqual([[tenant.organizationId, "owner", 3]])
      }
      expect(reads.creditUsage - before).toBe(2)
    }))
})

describe.each(sharedStores)("credit usage on %s", () => {
  it.layer(testServer(counting(postgresStorage)))("read for every request", (it) => {
    it.effect("concurrent listings share reads, and each shows only its caller's organizations", () =>
      Effect.gen(function*() {
        const tenants = [yield* seedTenant("first"), yield* seedTenant("second")]
        yield* spend(payer(tenants[1]!), { feature: "test", credits: 4 })
        yield* settled
        const before = reads.creditUsage
        const listings = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => tenants[i % 2]!),
          (tenant) => Effect.map(organizationsOf(tenant, tenant.personalAccessKey), (rows) => [tenant, rows] as const),
          { concurrency: "unbounded" }
        )
        for (const [tenant, rows] of listings) {
          expect(rows).toEqual([[tenant.organizationId, "owner", tenant === tenants[1] ? 4 : 0]])
        }
        expect(reads.creditUsage - before).toBeGreaterThan(0)
        expect(reads.creditUsage - before).toBeLessThan(20)
      }))
  })
})

it.layer(testServer(counting(pgliteStorage)))("cached reads reach the repository", (it) => {
  it.effect("once per revision: repeated reads are served from the cache until a write", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const before = { ...reads }
      for (let i = 0; i < 5; i++) {
        yield* organizationsOf(tenant, tenant.personalAccessKey)
        yield* companyUsersOf(tenant)
      }
      expect([reads.organizations - before.organizations, reads.companyUsers - before.companyUsers]).toEqual([1, 1])
      yield* addPerson(tenant, { companyRole: "member", organizationRole: "member" })
      yield* organizationsOf(tenant, tenant.personalAccessKey)
      expect((yield* companyUsersOf(tenant)).total).toBe(2)
      expect([reads.organizations - before.organizations, reads.companyUsers - before.companyUsers]).toEqual([2, 2])
    }))

  it.effect("a page served from the cache is the same JSON answer, with this request's rate-limit headers", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const path = `/api/v0/company_users/${tenant.companyId}?pageSize=5`
      const before = reads.companyUsers
      const first = yield* send(getWithKey(path, tenant.apiKey))
      const second = yield* send(getWithKey(path, tenant.apiKey))
      expect(reads.companyUsers - before).toBe(1)
      for (const response of [first, second]) {
        expect(response.status).toBe(200)
        expect(response.headers["content-type"]).toBe("application/json")
        expect(response.headers["ratelimit-remaining"]).toMatch(/^\d+$/)
      }
      expect(second.text).toBe(first.text)
      expect(second.body).toMatchObject({ company_users: [{ uid: tenant.userId }], pagination: { per_page: 5, total: 1 } })
    }))

  it.effect("searches are not cached", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const before = reads.companyUsers
      for (let i = 0; i < 3; i++) {
        yield* api.companyUsers.list({ params: { companyId: tenant.companyId }, query: { search: "example" } })
      }
      expect(reads.companyUsers - before).toBe(3)
    }))
})
