import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CompaniesRepo } from "../../src/accounts/companies/CompaniesRepo.ts"
import { generateKey } from "../../src/accounts/keys/KeyFormat.ts"
import { KeysRepo } from "../../src/accounts/keys/KeysRepo.ts"
import { OrganizationsRepo } from "../../src/accounts/organizations/OrganizationsRepo.ts"
import { CreditsRepo } from "../../src/accounts/usage/CreditsRepo.ts"
import type { CreditPool, NewUsageEvent } from "../../src/accounts/usage/UsageRepo.ts"
import { UsageRepo } from "../../src/accounts/usage/UsageRepo.ts"
import { UsersRepo } from "../../src/accounts/users/UsersRepo.ts"
import { backends, organizationDefaults } from "../support/TestServer.ts"

/**
 * One contract for every repository, run unchanged on every backend, so that
 * memory, PGlite and PostgreSQL cannot drift apart. Each case makes its own
 * rows (the layer, and so the database, is shared by the file).
 */

let counter = 0
const unique = (name: string) => `${name}-${process.pid}-${Date.now()}-${counter++}`

const newUser = (displayName = "Someone", email = `${unique("user")}@example.com`) =>
  Effect.flatMap(UsersRepo.use((users) => users.create({ email, displayName })), (user) => Effect.succeed(Option.getOrThrow(user)))

const newOrganization = (limits: { readonly creditLimit?: number; readonly dataCreditLimit?: number } = {}) =>
  OrganizationsRepo.use((organizations) => organizations.create({ name: unique("org"), ...limits }))

const newCompany = (organizationId: string) =>
  CompaniesRepo.use((companies) => companies.create({ organizationId, name: unique("company") }))

/** Lets the wall clock move on, so that events on either side of an instant are told apart. */
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

const usageEvent = (organizationId: string, event: Partial<NewUsageEvent> & { readonly credits: number }): NewUsageEvent => ({
  organizationId,
  companyId: null,
  userId: null,
  feature: "chat",
  model: "",
  tokens: (event.inputTokens ?? 0) + (event.outputTokens ?? 0),
  inputTokens: 0,
  outputTokens: 0,
  ...event
})

const leaseFor = (organizationId: string, pool: CreditPool) => ({ id: unique("lease"), organizationId, pool })

const inAMinute = () => new Date(Date.now() + 60_000)

/** Opens a lease of exactly `amount` (wanted = needed): the reservation, or why not. */
const openLease = (organizationId: string, pool: CreditPool, amount: number, expiresAt = inAMinute()) =>
  CreditsRepo.use((repo) =>
    Effect.gen(function*() {
      const lease = leaseFor(organizationId, pool)
      const reservation = yield* repo.reserve(lease, { needed: amount, wanted: amount, opening: true, expiresAt })
      return { lease, reservation }
    })
  )

/** Leases the event's credits and commits them at once: false, and nothing written, when they do not fit. */
const charge = (pool: CreditPool, event: NewUsageEvent) =>
  Effect.gen(function*() {
    const { lease, reservation } = yield* openLease(event.organizationId, pool, event.credits)
    if (reservation._tag !== "Reserved") return false
    const repo = yield* CreditsRepo
    expect(yield* repo.commit([{ lease, events: [event] }])).toEqual([{ credits: event.credits, fromLease: event.credits, alive: true }])
    yield* repo.end(lease)
    return true
  })

const balanceOf = (organizationId: string) =>
  Effect.map(OrganizationsRepo.use((organizations) => organizations.get(organizationId)), Option.getOrThrow)

describe.each(backends)("storage contract on $name", ({ storage }) => {
  it.layer(storage)((it) => {
    describe("Users", () => {
      it.effect("creates users and finds them by id and by email, case-insensitively", () =>
        Effect.gen(function*() {
          const users = yield* UsersRepo
          const email = `${unique("Mixed.Case")}@Example.com`
          const user = yield* newUser("Mia", email)
          expect(user).toMatchObject({ email, displayName: "Mia", photo: "" })
          expect(user.id).toMatch(/^usr_/)
          expect(user.createdAt).toBeInstanceOf(Date)
          expect(yield* users.get(user.id)).toEqual(Option.some(user))
          expect(yield* users.findByEmail(email.toLowerCase())).toEqual(Option.some(user))
          expect(yield* users.findByEmail(email.toUpperCase())).toEqual(Option.some(user))
          expect(yield* users.get("usr_missing")).toEqual(Option.none())
          expect(yield* users.findByEmail("nobody@example.com")).toEqual(Option.none())
        }))

      it.effect("refuses a second user with the same email in another case", () =>
        Effect.gen(function*() {
          const users = yield* UsersRepo
          const email = `${unique("dup")}@example.com`
          yield* newUser("First", email)
          expect(yield* users.create({ email: email.toUpperCase() })).toEqual(Option.none())
          const defaults = Option.getOrThrow(yield* users.create({ email: `${unique("plain")}@example.com` }))
          expect(defaults.displayName).toBe("")
        }))
    })

    describe("Organizations", () => {
      it.effect("creates organizations with defaults or the given plan and limits", () =>
        Effect.gen(function*() {
          const organizations = yield* OrganizationsRepo
          const plain = yield* organizations.create({ name: "Plain" })
          expect(plain).toMatchObject({
            name: "Plain",
            ownerUserId: null,
            ownerIds: [],
            ...organizationDefaults
          })
          const configured = yield* organizations.create({
            name: "Big",
            subscriptionType: "pro",
            creditLimit: 9_000_000_000,
            dataCreditLimit: 5,
            seats: 40,
            companyLimit: 4
          })
          expect(configured).toMatchObject({ subscriptionType: "pro", creditLimit: 9_000_000_000, dataCreditLimit: 5, seats: 40, companyLimit: 4 })
          expect(yield* organizations.get(configured.id)).toEqual(Option.some(configured))
          expect(yield* organizations.get("org_missing")).toEqual(Option.none())
        }))

      it.effect("changes to an unknown organization answer none", () =>
        Effect.gen(function*() {
          const organizations = yield* OrganizationsRepo
          const user = yield* newUser()
          expect(yield* organizations.setOwner("org_missing", user.id)).toEqual(Option.none())
          expect(yield* organizations.addOwner("org_missing", user.id)).toEqual(Option.none())
          expect(yield* organizations.addMember("org_missing", user.id, "member")).toEqual(Option.none())
          expect(yield* organizations.roleOf("org_missing", user.id)).toEqual(Option.none())
        }))

      it.effect("resolves roles: membership role, else owner user, else owners list; a company alone gives nothing", () =>
        Effect.gen(function*() {
          const organizations = yield* OrganizationsRepo
          const organization = yield* newOrganization()
          const id = organization.id
          const [ownerUser, listedOwner, member, ownerWithMembership, listedWithMembership, collaborator, stranger] =
            yield* Effect.all(Array.from({ length: 7 }, () => newUser()))
          yield* organizations.setOwner(id, ownerUser.id)
          yield* organizations.setOwner(id, ownerWithMembership.id)
          yield* organizations.addOwner(id, listedOwner.id)
          yield* organizations.addOwner(id, listedWithMembership.id)
          yield* organizations.addOwner(id, listedOwner.id)
          yield* organizations.addMember(id, member.id, "admin")
          yield* organizations.addMember(id, member.id, "member")
          yield* organizations.addMember(id, ownerWithMembership.id, "admin")
          yield* organizations.addMember(id, listedWithMembership.id, "member")
          const company = yield* newCompany(id)
          yield* CompaniesRepo.use((companies) => companies.addUser({ companyId: company.id, userId: collaborator.id, role: "owner" }))

          const current = Option.getOrThrow(yield* organizations.get(id))
          expect(current.ownerUserId).toBe(ownerWithMembership.id)
          expect(current.ownerIds).toEqual([listedOwner.id, listedWithMembership.id].sort())

          const expected = [
            [ownerUser, Option.none()],
            [ownerWithMembership, Option.some("admin")],
            [listedOwner, Option.some("admin")],
            [listedWithMembership, Option.some("member")],
            [member, Option.some("member")],
            [collaborator, Option.none()],
            [stranger, Option.none()]
          ] as const
          for (const [user, role] of expected) {
            expect(yield* organizations.roleOf(id, user.id)).toEqual(role)
            const listed = (yield* organizations.listForUser(user.id)).map((entry) => entry.role)
            expect(listed).toEqual(Option.toArray(role))
          }
          // The owner user alone (no membership) resolves to owner.
          yield* organizations.setOwner(id, ownerUser.id)
          expect(yield* organizations.roleOf(id, ownerUser.id)).toEqual(Option.some("owner"))
          expect(yield* organizations.listForUser(ownerUser.id)).toEqual([
            { organization: Option.getOrThrow(yield* organizations.get(id)), role: "owner" }
          ])
        }))

      it.effect("lists a user's organizations in creation order", () =>
        Effect.gen(function*() {
          const organizations = yield* OrganizationsRepo
          const user = yield* newUser()
          const first = yield* newOrganization()
          const second = yield* newOrganization()
          yield* newOrganization()
          yield* organizations.addMember(second.id, user.id, "admin")
          yield* organizations.addMember(first.id, user.id, "member")
          const listed = yield* organizations.listForUser(user.id)
          expect(listed.map((entry) => [entry.organization.id, entry.role])).toEqual([[first.id, "member"], [second.id, "admin"]])
        }))
    })

    describe("Companies", () => {
      it.effect("creates companies, counts them per organization and lists a user's", () =>
        Effect.gen(function*() {
          const companies = yield* CompaniesRepo
          const organization = yield* newOrganization()
          const first = yield* newCompany(organization.id)
          const second = yield* newCompany(organization.id)
          const elsewhere = yield* newCompany((yield* newOrganization()).id)
          expect(first).toMatchObject({ organizationId: organization.id })
          expect(first.id).toMatch(/^cmp_/)
          expect(yield* companies.get(first.id)).toEqual(Option.some(first))
          expect(yield* companies.get("cmp_missing")).toEqual(Option.none())
          expect(yield* companies.countInOrganization(organization.id)).toBe(2)
          expect(yield* companies.countInOrganization("org_missing")).toBe(0)
          const user = yield* newUser()
          yield* companies.addUser({ companyId: elsewhere.id, userId: user.id, role: "viewer" })
          yield* companies.addUser({ companyId: first.id, userId: user.id, role: "member" })
          expect(yield* companies.listForUser(user.id)).toEqual([first, elsewhere])
          expect(second.id > first.id).toBe(true)
        }))

      it.effect("adds a company user once, with the person's profile", () =>
        Effect.gen(function*() {
          const companies = yield* CompaniesRepo
          const company = yield* newCompany((yield* newOrganization()).id)
          const user = yield* newUser("Ada Lovelace")
          const added = Option.getOrThrow(
            yield* companies.addUser({ companyId: company.id, userId: user.id, role: "admin", allowedFeatures: ["chat", "projects"] })
          )
          expect(added).toMatchObject({
            companyId: company.id,
            userId: user.id,
            role: "admin",
            allowedFeatures: ["chat", "projects"],
            email: user.email,
            displayName: "Ada Lovelace",
            photo: ""
          })
          expect(yield* companies.getUser(company.id, user.id)).toEqual(Option.some(added))
          expect(yield* companies.addUser({ companyId: company.id, userId: user.id, role: "owner" })).toEqual(Option.none())
          expect(yield* companies.getUser(company.id, "usr_missing")).toEqual(Option.none())
          const plain = Option.getOrThrow(yield* companies.addUser({ companyId: company.id, userId: (yield* newUser()).id, role: "viewer" }))
          expect(plain.allowedFeatures).toEqual([])
        }))

      it.effect("lists company users with search on name or email, case-insensitive, LIKE characters literal, paged", () =>
        Effect.gen(function*() {
          const companies = yield* CompaniesRepo
          const company = yield* newCompany((yield* newOrganization()).id)
          const tag = unique("dom").toLowerCase()
          const people = [
            ["Alice Smith", `alice@${tag}.test`],
            ["Bob 100% Real", `bob@${tag}.test`],
            ["Carol", `carol_x@${tag}.test`],
            ["Back\\slash", `back@${tag}.test`],
            ["Dave", `DAVE@${tag.toUpperCase()}.TEST`]
          ] as const
          const views = []
          for (const [name, email] of people) {
            const user = yield* newUser(name, email)
            views.push(Option.getOrThrow(yield* companies.addUser({ companyId: company.id, userId: user.id, role: "member" })))
          }
          // A person of another company never shows.
          const other = yield* newCompany((yield* newOrganization()).id)
          yield* companies.addUser({ companyId: other.id, userId: (yield* newUser("Alice Other", `alice@${tag}.other`)).id, role: "member" })

          const search = (text: string | undefined, offset = 0, limit = 50) =>
            Effect.map(companies.listUsers(company.id, { search: text, offset, limit }), ({ rows, total }) => ({
              names: rows.map((row) => row.displayName),
              total
            }))
          const names = people.map(([name]) => name)
          expect(yield* search(undefined)).toEqual({ names, total: 5 })
          expect(yield* search("")).toEqual({ names, total: 5 })
          expect(yield* search("aLiCe")).toEqual({ names: ["Alice Smith"], total: 1 })
          expect(yield* search(tag.toUpperCase())).toEqual({ names, total: 5 })
          expect(yield* search("dave@")).toEqual({ names: ["Dave"], total: 1 })
          expect(yield* search("%")).toEqual({ names: ["Bob 100% Real"], total: 1 })
          expect(yield* search("0% r")).toEqual({ names: ["Bob 100% Real"], total: 1 })
          expect(yield* search("_")).toEqual({ names: ["Carol"], total: 1 })
          expect(yield* search("\\")).toEqual({ names: ["Back\\slash"], total: 1 })
          expect(yield* search("nobody-at-all")).toEqual({ names: [], total: 0 })
          expect(yield* search(undefined, 0, 2)).toEqual({ names: names.slice(0, 2), total: 5 })
          expect(yield* search(undefined, 2, 2)).toEqual({ names: names.slice(2, 4), total: 5 })
          expect(yield* search(undefined, 4, 2)).toEqual({ names: names.slice(4), total: 5 })
          expect(yield* search(undefined, 10, 2)).toEqual({ names: [], total: 5 })
          expect(yield* search(tag, 1, 1)).toEqual({ names: [names[1]], total: 5 })
        }))

      it.effect("updates role and allowed features separately, removes users and counts owners", () =>
        Effect.gen(function*() {
          const companies = yield* CompaniesRepo
          const company = yield* newCompany((yield* newOrganization()).id)
          const owner = yield* newUser()
          const member = yield* newUser()
          yield* companies.addUser({ companyId: company.id, userId: owner.id, role: "owner" })
          yield* companies.addUser({ companyId: company.id, userId: member.id, role: "member", allowedFeatures: ["chat"] })
          expect(yield* companies.countOwners(company.id)).toBe(1)

          const promoted = Option.getOrThrow(yield* companies.updateUser(company.id, member.id, { role: "owner" }))
          expect(promoted).toMatchObject({ role: "owner", allowedFeatures: ["chat"] })
          expect(yield* companies.countOwners(company.id)).toBe(2)
          const narrowed = Option.getOrThrow(yield* companies.updateUser(company.id, member.id, { allowedFeatures: ["projects", "tasks"] }))
          expect(narrowed).toMatchObject({ role: "owner", allowedFeatures: ["projects", "tasks"] })
          const cleared = Option.getOrThrow(yield* companies.updateUser(company.id, member.id, { allowedFeatures: [] }))
          expect(cleared.allowedFeatures).toEqual([])
          expect(yield* companies.updateUser(company.id, "usr_missing", { role: "admin" })).toEqual(Option.none())

          expect(yield* companies.removeUser(company.id, member.id)).toBe(true)
          expect(yield* companies.removeUser(company.id, member.id)).toBe(false)
          expect(yield* companies.getUser(company.id, member.id)).toEqual(Option.none())
          expect(yield* companies.countOwners(company.id)).toBe(1)
          expect((yield* companies.listUsers(company.id, { offset: 0, limit: 10 })).total).toBe(1)
        }))
    })

    describe("Keys", () => {
      const companyKey = (companyId: string, name: string) => {
        const generated = generateKey("company")
        return Effect.gen(function*() {
          const creator = yield* newUser()
          const created = yield* KeysRepo.use((keys) =>
            keys.createCompanyKey({ companyId, createdByUserId: creator.id, name, keyHash: generated.hash, masked: generated.masked })
          )
          return { created, generated, creator }
        })
      }

      it.effect("company keys: one name per company, found by name and by hash, listed in creation order", () =>
        Effect.gen(function*() {
          const keys = yield* KeysRepo
          const organization = yield* newOrganization()
          const company = yield* newCompany(organization.id)
          const other = yield* newCompany(organization.id)
          const first = yield* companyKey(company.id, "default")
          const key = Option.getOrThrow(first.created)
          expect(key).toMatchObject({
            companyId: company.id,
            createdByUserId: first.creator.id,
            name: "default",
            keyHash: first.generated.hash,
            masked: first.generated.masked
          })
          expect((yield* companyKey(company.id, "default")).created).toEqual(Option.none())
          expect(Option.isSome((yield* companyKey(other.id, "default")).created)).toBe(true)
          const second = Option.getOrThrow((yield* companyKey(company.id, "ci")).created)
          expect(yield* keys.findCompanyKey(company.id, "default")).toEqual(Option.some(key))
          expect(yield* keys.findCompanyKey(company.id, "DEFAULT")).toEqual(Option.none())
          expect(yield* keys.findCompanyKeyByHash(first.generated.hash)).toEqual(Option.some(key))
          expect(yield* keys.findCompanyKeyByHash(generateKey("company").hash)).toEqual(Option.none())
          expect(yield* keys.listCompanyKeys(company.id)).toEqual([key, second])
        }))

      it.effect("deleting a company key answers the deleted row, once", () =>
        Effect.gen(function*() {
          const keys = yield* KeysRepo
          const company = yield* newCompany((yield* newOrganization()).id)
          const { created, generated } = yield* companyKey(company.id, "temporary")
          expect(yield* keys.deleteCompanyKey(company.id, "temporary")).toEqual(created)
          expect(yield* keys.deleteCompanyKey(company.id, "temporary")).toEqual(Option.none())
          expect(yield* keys.findCompanyKeyByHash(generated.hash)).toEqual(Option.none())
          expect(yield* keys.listCompanyKeys(company.id)).toEqual([])
          // The name is free again.
          expect(Option.isSome((yield* companyKey(company.id, "temporary")).created)).toBe(true)
        }))

      it.effect("personal keys: expiry kept, found by hash, listed per user, deleted only by their user", () =>
        Effect.gen(function*() {
          const keys = yield* KeysRepo
          const owner = yield* newUser()
          const other = yield* newUser()
          const expiresAt = new Date(Date.now() + 3_600_000)
          const generated = generateKey("personal")
          const expiring = yield* keys.createPersonalKey({
            userId: owner.id,
            name: "laptop",
            keyHash: generated.hash,
            masked: generated.masked,
            expiresAt
          })
          expect(expiring).toMatchObject({ userId: owner.id, name: "laptop", expiresAt })
          const lasting = yield* keys.createPersonalKey({ userId: owner.id, name: "ci", ...hashes("personal"), expiresAt: null })
          expect(lasting.expiresAt).toBeNull()
          yield* keys.createPersonalKey({ userId: other.id, name: "theirs", ...hashes("personal"), expiresAt: null })
          expect(yield* keys.findPersonalKeyByHash(generated.hash)).toEqual(Option.some(expiring))
          expect(yield* keys.listPersonalKeys(owner.id)).toEqual([expiring, lasting])
          expect(yield* keys.deletePersonalKey(other.id, expiring.id)).toEqual(Option.none())
          expect(yield* keys.deletePersonalKey(owner.id, expiring.id)).toEqual(Option.some(expiring))
          expect(yield* keys.findPersonalKeyByHash(generated.hash)).toEqual(Option.none())
          expect(yield* keys.listPersonalKeys(owner.id)).toEqual([lasting])
        }))
    })

    describe("Usage", () => {
      it.effect("a reservation is conditional: usage plus everything leased never passes the limit, and a refused one writes nothing", () =>
        Effect.gen(function*() {
          const repo = yield* CreditsRepo
          const organization = yield* newOrganization({ creditLimit: 10 })
          const first = yield* openLease(organization.id, "credits", 4)
          expect(first.reservation).toEqual({ _tag: "Reserved", amount: 4 })
          expect((yield* openLease(organization.id, "credits", 4)).reservation).toEqual({ _tag: "Reserved", amount: 4 })
          expect((yield* openLease(organization.id, "credits", 3)).reservation).toEqual({ _tag: "Refused" })
          // Growing a lease: at least what is needed, and of what is wanted at most half of what is free.
          expect(yield* repo.reserve(first.lease, { needed: 1, wanted: 100, opening: false, expiresAt: inAMinute() }))
            .toEqual({ _tag: "Reserved", amount: 1 })
          yield* repo.end(first.lease)
          yield* repo.end(first.lease)
          expect(yield* repo.reserve(first.lease, { needed: 1, wanted: 1, opening: false, expiresAt: inAMinute() }))
            .toEqual({ _tag: "Lost" })
          expect((yield* openLease(organization.id, "credits", 6)).reservation).toEqual({ _tag: "Reserved", amount: 6 })
          expect((yield* openLease(organization.id, "credits", 1)).reservation).toEqual({ _tag: "Refused" })
          expect((yield* openLease("org_missing", "credits", 0)).reservation).toEqual({ _tag: "Refused" })
          const history = yield* UsageRepo.use((usage) => usage.history(organization.id, {}, { offset: 0, limit: 100 }))
          expect(history.total).toBe(0)
          expect(yield* balanceOf(organization.id)).toMatchObject({ creditLimit: 10, creditUsage: 0 })
        }))

      it.effect("a commit past what its lease holds charges the overrun too: the lease pays what it held, usage passes the limit", () =>
        Effect.gen(function*() {
          const repo = yield* CreditsRepo
          const organization = yield* newOrganization({ creditLimit: 5 })
          const { lease } = yield* openLease(organization.id, "credits", 4)
          expect(yield* repo.commit([{ lease, events: [usageEvent(organization.id, { credits: 7, outputTokens: 7 })] }]))
            .toEqual([{ credits: 7, fromLease: 4, alive: true }])
          expect(yield* balanceOf(organization.id)).toMatchObject({ creditLimit: 5, creditUsage: 7 })
          // Nothing is left held by the lease, and the pool refuses any more.
          yield* repo.end(lease)
          expect((yield* openLease(organization.id, "credits", 1)).reservation).toEqual({ _tag: "Refused" })
          const history = yield* UsageRepo.use((usage) => usage.history(organization.id, {}, { offset: 0, limit: 100 }))
          expect(history.events.map((e) => e.credits)).toEqual([7])
        }))

      it.effect("a commit moves spending from the lease to usage with its events; a lost lease pays only from what nobody holds", () =>
        Effect.gen(function*() {
          const repo = yield* CreditsRepo
          const organization = yield* newOrganization({ creditLimit: 10 })
          const first = yield* openLease(organization.id, "credits", 4)
          const second = yield* openLease(organization.id, "credits", 4)
          const event = (credits: number) => usageEvent(organization.id, { credits, outputTokens: 50 })
          expect(yield* repo.commit([{ lease: first.lease, events: [event(1), event(2)] }, { lease: second.lease, events: [] }]))
            .toEqual([{ credits: 3, fromLease: 3, alive: true }, { credits: 0, fromLease: 0, alive: true }])
          // The first lease still holds 1: usage 3 + held 5 leaves 2 free; a lost lease's 4 are charged 2.
          yield* repo.end(second.lease)
          const after = yield* openLease(organization.id, "credits", 4)
          expect(after.reservation).toEqual({ _tag: "Reserved", amount: 4 })
          expect(yield* repo.commit([{ lease: second.lease, events: [event(3), event(1)] }]))
            .toEqual([{ credits: 2, fromLease: 0, alive: false }])
          expect(yield* balanceOf(organization.id)).toMatchObject({ creditLimit: 10, creditUsage: 5 })
          const history = yield* UsageRepo.use((usage) => usage.history(organization.id, {}, { offset: 0, limit: 100 }))
          expect(history.events.map((e) => e.credits).toSorted()).toEqual([0, 1, 2, 2])
          // Ending returns what each lease still holds: 1 and 4 of the 10 are free again (usage 5).
          yield* repo.end(first.lease)
          yield* repo.end(after.lease)
          expect((yield* openLease(organization.id, "credits", 5)).reservation).toEqual({ _tag: "Reserved", amount: 5 })
          expect((yield* openLease(organization.id, "credits", 1)).reservation).toEqual({ _tag: "Refused" })
        }))

      it.effect("leases expire unless renewed, and an expired lease is released once", () =>
        Effect.gen(function*() {
          const repo = yield* CreditsRepo
          const organization = yield* newOrganization({ creditLimit: 10 })
          const now = Date.now()
          const kept = yield* openLease(organization.id, "credits", 3, new Date(now + 1_000))
          const lapsed = yield* openLease(organization.id, "credits", 5, new Date(now + 1_000))
          const gone = leaseFor(organization.id, "credits")
          expect(yield* repo.renew([kept.lease.id, gone.id], new Date(now + 60_000))).toEqual([kept.lease.id])
          const expired = (yield* repo.expired(new Date(now + 2_000), 1_000)).filter((key) => key.organizationId === organization.id)
          expect(expired).toEqual([lapsed.lease])
          yield* repo.end(expired[0])
          yield* repo.end(expired[0])
          expect((yield* openLease(organization.id, "credits", 7)).reservation).toEqual({ _tag: "Reserved", amount: 7 })
          expect((yield* openLease(organization.id, "credits", 1)).reservation).toEqual({ _tag: "Refused" })
        }))

      it.effect("the data-credit pool is independent of the credit pool", () =>
        Effect.gen(function*() {
          const organization = yield* newOrganization({ creditLimit: 5, dataCreditLimit: 2 })
          const jobs = usageEvent(organization.id, { credits: 1, feature: "jobs" })
          expect(yield* charge("data", jobs)).toBe(true)
          expect(yield* charge("data", jobs)).toBe(true)
          expect(yield* charge("data", jobs)).toBe(false)
          expect(yield* charge("credits", usageEvent(organization.id, { credits: 5 }))).toBe(true)
          expect(yield* balanceOf(organization.id)).toMatchObject({ creditUsage: 5, dataCreditUsage: 2 })
          const empty = yield* newOrganization({ creditLimit: 100 })
          expect(yield* charge("data", usageEvent(empty.id, { credits: 1 }))).toBe(false)
        }))

      it.effect("the summary totals every matching event and groups by model and feature, by credits descending, data credits apart", () =>
        Effect.gen(function*() {
          const organization = yield* newOrganization({ creditLimit: 1_000, dataCreditLimit: 100 })
          const other = yield* newOrganization({ creditLimit: 1_000 })
          const events = [
            { pool: "credits", model: "m1", feature: "chat", credits: 5, inputTokens: 100, outputTokens: 50 },
            { pool: "credits", model: "m2", feature: "chat", credits: 2, inputTokens: 10, outputTokens: 10 },
            { pool: "credits", model: "m1", feature: "content", credits: 1, inputTokens: 5, outputTokens: 0 },
            { pool: "credits", model: "m3", feature: "tasks", credits: 7, inputTokens: 0, outputTokens: 0 },
            { pool: "data", model: "", feature: "jobs", credits: 3, inputTokens: 0, outputTokens: 0 }
          ] as const
          for (const { pool, ...event } of events) yield* charge(pool, usageEvent(organization.id, event))
          yield* charge("credits", usageEvent(other.id, { model: "m1", feature: "chat", credits: 99 }))
          const summary = yield* UsageRepo.use((usage) => usage.summary(organization.id, {}, { offset: 0, limit: 100 }))
          expect(summary.totals).toEqual({ credits: 15, dataCredits: 3, tokens: 175, inputTokens: 115, outputTokens: 60, requests: 5 })
          expect(summary.byModel).toEqual([
            { model: "m3", feature: "", credits: 7, dataCredits: 0, tokens: 0, requests: 1 },
            { model: "m1", feature: "", credits: 6, dataCredits: 0, tokens: 155, requests: 2 },
            { model: "m2", feature: "", credits: 2, dataCredits: 0, tokens: 20, requests: 1 },
            { model: "", feature: "", credits: 0, dataCredits: 3, tokens: 0, requests: 1 }
          ])
          // chat and tasks tie on credits: the name decides; data credits come after every credit.
          expect(summary.byFeature).toEqual([
            { model: "", feature: "chat", credits: 7, dataCredits: 0, tokens: 170, requests: 2 },
            { model: "", feature: "tasks", credits: 7, dataCredits: 0, tokens: 0, requests: 1 },
            { model: "", feature: "content", credits: 1, dataCredits: 0, tokens: 5, requests: 1 },
            { model: "", feature: "jobs", credits: 0, dataCredits: 3, tokens: 0, requests: 1 }
          ])
          const window = yield* UsageRepo.use((usage) => usage.summary(organization.id, {}, { offset: 1, limit: 1 }))
          expect(window.totals).toEqual(summary.totals)
          expect(window.byModel).toEqual([summary.byModel[1]])
          expect(window.byFeature).toEqual([summary.byFeature[1]])
          const filtered = yield* UsageRepo.use((usage) => usage.summary(organization.id, { featureKey: "chat" }, { offset: 0, limit: 100 }))
          expect(filtered.totals).toMatchObject({ credits: 7, dataCredits: 0, requests: 2 })
          expect(filtered.byFeature.map((row) => row.feature)).toEqual(["chat"])
          const unused = yield* newOrganization()
          const none = yield* UsageRepo.use((usage) => usage.summary(unused.id, {}, { offset: 0, limit: 100 }))
          expect(none).toEqual({ totals: { credits: 0, dataCredits: 0, tokens: 0, inputTokens: 0, outputTokens: 0, requests: 0 }, byModel: [], byFeature: [] })
        }))

      it.effect("history is newest first and paged; user, feature and inclusive date filters apply", () =>
        Effect.gen(function*() {
          const organization = yield* newOrganization({ creditLimit: 1_000 })
          const usage = yield* UsageRepo
          yield* charge("credits", usageEvent(organization.id, { credits: 1, userId: "usr_a", feature: "chat" }))
          yield* charge("credits", usageEvent(organization.id, { credits: 2, userId: "usr_b", feature: "content" }))
          yield* pause
          const middle = new Date()
          yield* pause
          yield* charge("credits", usageEvent(organization.id, { credits: 3, userId: "usr_a", feature: "content", companyId: "cmp_x" }))
          const all = { offset: 0, limit: 100 }
          const credits = (filter: Parameters<typeof usage.history>[1], window = all) =>
            Effect.map(usage.history(organization.id, filter, window), ({ events, total }) => ({
              credits: events.map((event) => event.credits),
              total
            }))
          expect(yield* credits({})).toEqual({ credits: [3, 2, 1], total: 3 })
          expect(yield* credits({}, { offset: 1, limit: 1 })).toEqual({ credits: [2], total: 3 })
          expect(yield* credits({ userId: "usr_a" })).toEqual({ credits: [3, 1], total: 2 })
          expect(yield* credits({ featureKey: "content" })).toEqual({ credits: [3, 2], total: 2 })
          expect(yield* credits({ userId: "usr_a", featureKey: "content" })).toEqual({ credits: [3], total: 1 })
          expect(yield* credits({ startDate: middle })).toEqual({ credits: [3], total: 1 })
          expect(yield* credits({ endDate: middle })).toEqual({ credits: [2, 1], total: 2 })
          expect(yield* credits({ startDate: new Date(Date.now() + 60_000) })).toEqual({ credits: [], total: 0 })

          const [latest] = (yield* usage.history(organization.id, {}, all)).events
          expect(latest).toMatchObject({ organizationId: organization.id, companyId: "cmp_x", userId: "usr_a", feature: "content", credits: 3 })
          expect(latest.id).toMatch(/^use_/)
          // Both bounds include an event at the very millisecond it shows.
          expect(yield* credits({ startDate: latest.createdAt })).toEqual({ credits: [3], total: 1 })
          expect(yield* credits({ startDate: latest.createdAt, endDate: latest.createdAt })).toEqual({ credits: [3], total: 1 })
          const [, earlier] = (yield* usage.history(organization.id, {}, all)).events
          expect(yield* credits({ endDate: earlier.createdAt })).toEqual({ credits: [2, 1], total: 2 })
          const summary = yield* usage.summary(organization.id, { startDate: middle }, all)
          expect(summary.totals.credits).toBe(3)
        }))
    })
  })
})

const hashes = (kind: "company" | "personal") => {
  const { hash, masked } = generateKey(kind)
  return { keyHash: hash, masked }
}
