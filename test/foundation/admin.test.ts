import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { HttpClientRequest } from "effect/http"
import { failsWith } from "../support/Assertions.ts"
import { expectErrorResponse, send } from "../support/Http.ts"
import { adminKey, client, organizationDefaults, pgliteStorage, testServer } from "../support/TestServer.ts"

const adminClient = (key = adminKey) => client({ apiKey: key, scheme: "bearer" })

let emailCounter = 0
const uniqueEmail = (name = "admin-test") => `${name}-${Date.now()}-${emailCounter++}@example.com`

/** Every admin operation as the published description lists it, with its path parameters filled in. */
const adminRoutes = Effect.gen(function*() {
  const document = (yield* send(HttpClientRequest.get("/api/v0/openapi.json"))).body as {
    readonly paths: Record<string, Record<string, unknown>>
  }
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith("/api/v0/admin/"))
    .flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x") }))
    )
})

const requestTo = (route: { readonly method: string; readonly path: string }) =>
  HttpClientRequest.make(route.method as "POST")(route.path).pipe(
    HttpClientRequest.bodyText(JSON.stringify({}), "application/json")
  )

it.layer(testServer(pgliteStorage))("admin API", (it) => {
  it.effect("creates an organization with defaults, or with the given plan and limits", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const plain = yield* admin.admin.createOrganization({ payload: { name: "Plain" } })
      expect(plain).toMatchObject({
        name: "Plain",
        ownerUserId: null,
        owners: [],
        ...organizationDefaults
      })
      expect(plain.id).toMatch(/^org_/)
      const configured = yield* admin.admin.createOrganization({
        payload: { name: "Big", subscriptionType: "enterprise", creditLimit: 500, dataCreditLimit: 7, seats: 25, companyLimit: 3 }
      })
      expect(configured).toMatchObject({
        subscriptionType: "enterprise",
        creditLimit: 500,
        dataCreditLimit: 7,
        seats: 25,
        companyLimit: 3
      })
    }))

  it.effect("creates users with unique emails, case-insensitively", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const email = uniqueEmail("Casey")
      const user = yield* admin.admin.createUser({ payload: { email, displayName: "Casey" } })
      expect(user).toEqual({ id: expect.stringMatching(/^usr_/), email, displayName: "Casey" })
      yield* failsWith(admin.admin.createUser({ payload: { email: email.toUpperCase() } }), "BadRequest", "already exists")
    }))

  it.effect("adds members, sets the owner user and the owners list; unknown ids answer 404", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const organization = yield* admin.admin.createOrganization({ payload: { name: "Members" } })
      const user = yield* admin.admin.createUser({ payload: { email: uniqueEmail() } })
      const orgId = organization.id
      const membership = yield* admin.admin.addMember({ params: { orgId }, payload: { userId: user.id, role: "member" } })
      expect(membership).toEqual({ organizationId: orgId, userId: user.id, role: "member" })
      const owned = yield* admin.admin.setOwner({ params: { orgId }, payload: { userId: user.id } })
      expect(owned.ownerUserId).toBe(user.id)
      const withOwners = yield* admin.admin.addOwner({ params: { orgId }, payload: { userId: user.id } })
      expect(withOwners.owners).toEqual([user.id])
      const again = yield* admin.admin.addOwner({ params: { orgId }, payload: { userId: user.id } })
      expect(again.owners).toEqual([user.id])

      const missingOrg = "Organization org_missing not found"
      const missingUser = "User usr_missing not found"
      yield* failsWith(admin.admin.addMember({ params: { orgId: "org_missing" }, payload: { userId: user.id, role: "admin" } }), "NotFound", missingOrg)
      yield* failsWith(admin.admin.addMember({ params: { orgId }, payload: { userId: "usr_missing", role: "admin" } }), "NotFound", missingUser)
      yield* failsWith(admin.admin.setOwner({ params: { orgId: "org_missing" }, payload: { userId: user.id } }), "NotFound", missingOrg)
      yield* failsWith(admin.admin.setOwner({ params: { orgId }, payload: { userId: "usr_missing" } }), "NotFound", missingUser)
      yield* failsWith(admin.admin.addOwner({ params: { orgId: "org_missing" }, payload: { userId: user.id } }), "NotFound", missingOrg)
      yield* failsWith(admin.admin.addOwner({ params: { orgId }, payload: { userId: "usr_missing" } }), "NotFound", missingUser)
    }))

  it.effect("creates companies and company users; duplicates answer 400, unknown ids 404", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const organization = yield* admin.admin.createOrganization({ payload: { name: "Companies" } })
      const company = yield* admin.admin.createCompany({ payload: { organizationId: organization.id, name: "Shop" } })
      expect(company).toEqual({ id: expect.stringMatching(/^cmp_/), name: "Shop", organizationId: organization.id })
      const user = yield* admin.admin.createUser({ payload: { email: uniqueEmail(), displayName: "Dana" } })
      const companyUser = yield* admin.admin.addCompanyUser({
        params: { companyId: company.id },
        payload: { userId: user.id, role: "member", allowedFeatures: ["chat"] }
      })
      expect(companyUser).toMatchObject({
        companyId: company.id,
        uid: user.id,
        email: user.email,
        displayName: "Dana",
        role: "member",
        allowedFeatures: ["chat"]
      })
      yield* failsWith(
        admin.admin.addCompanyUser({ params: { companyId: company.id }, payload: { userId: user.id, role: "admin" } }),
        "BadRequest",
        "already belongs"
      )
      yield* failsWith(admin.admin.createCompany({ payload: { organizationId: "org_missing", name: "Nope" } }), "NotFound")
      yield* failsWith(
        admin.admin.addCompanyUser({ params: { companyId: "cmp_missing" }, payload: { userId: user.id, role: "member" } }),
        "NotFound",
        "Company cmp_missing"
      )
      yield* failsWith(
        admin.admin.addCompanyUser({ params: { companyId: company.id }, payload: { userId: "usr_missing", role: "member" } }),
        "NotFound",
        "User usr_missing"
      )
    }))

  it.effect("creates personal access keys that work, shown once; a past expiry answers 400", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const organization = yield* admin.admin.createOrganization({ payload: { name: "Keys" } })
      const company = yield* admin.admin.createCompany({ payload: { organizationId: organization.id, name: "Keyed" } })
      const user = yield* admin.admin.createUser({ payload: { email: uniqueEmail() } })
      yield* admin.admin.addCompanyUser({ params: { companyId: company.id }, payload: { userId: user.id, role: "viewer" } })
      const expiresAt = new Date(Date.now() + 86_400_000)
      const created = yield* admin.admin.createPersonalAccessKey({
        params: { userId: user.id },
        payload: { name: "laptop", expiresAt }
      })
      expect(created).toMatchObject({ name: "laptop", expiresAt })
      expect(created.key).toMatch(/^pak_/)
      const api = yield* client({ apiKey: created.key, companyId: company.id })
      expect(yield* api.me.get()).toMatchObject({ keyKind: "personal", keyId: created.id, userId: user.id, role: "viewer" })

      yield* failsWith(
        admin.admin.createPersonalAccessKey({
          params: { userId: user.id },
          payload: { name: "old", expiresAt: new Date(Date.now() - 1000) }
        }),
        "BadRequest",
        "expiresAt"
      )
      yield* failsWith(
        admin.admin.createPersonalAccessKey({ params: { userId: "usr_missing" }, payload: { name: "x" } }),
        "NotFound"
      )
    }))

  it.effect("bootstrap creates an organization, company and owner whose keys work", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const email = uniqueEmail("owner")
      const created = yield* admin.admin.bootstrap({ payload: { organization: "Boot org", company: "Boot co", email } })
      expect(created.apiKey).toMatch(/^plk_/)
      expect(created.personalAccessKey).toMatch(/^pak_/)
      const companyKey = yield* client({ apiKey: created.apiKey })
      expect(yield* companyKey.me.get()).toMatchObject({
        keyKind: "company",
        companyId: created.companyId,
        organizationId: created.organizationId,
        companyName: "Boot co",
        userId: created.userId,
        role: "owner"
      })
      const personal = yield* client({ apiKey: created.personalAccessKey, companyId: created.companyId })
      expect(yield* personal.me.get()).toMatchObject({ keyKind: "personal", userId: created.userId, role: "owner" })
      const organizations = yield* personal.organizations.list()
      expect(organizations.organizations).toEqual([
        expect.objectContaining({ id: created.organizationId, name: "Boot org", role: "owner" })
      ])
      // The same email again reuses the user and gives it a second organization.
      const second = yield* admin.admin.bootstrap({ payload: { organization: "Second", company: "Second co", email } })
      expect(second.userId).toBe(created.userId)
      expect(second.organizationId).not.toBe(created.organizationId)
    }))

  it.effect("a wrong or missing admin key answers 401 on every admin route", () =>
    Effect.gen(function*() {
      const routes = yield* adminRoutes
      expect(routes.length).toBe(9)
      for (const route of routes) {
        expectErrorResponse(yield* send(requestTo(route).pipe(HttpClientRequest.bearerToken("wrong-key"))), 401)
        expectErrorResponse(yield* send(requestTo(route)), 401)
      }
      const wrong = yield* adminClient("wrong-key")
      yield* failsWith(wrong.admin.createUser({ payload: { email: uniqueEmail() } }), "Unauthorized")
    }))

  it.effect("a company key is not an admin key", () =>
    Effect.gen(function*() {
      const admin = yield* adminClient()
      const created = yield* admin.admin.bootstrap({ payload: { organization: "O", company: "C", email: uniqueEmail() } })
      const impostor = yield* adminClient(created.apiKey)
      yield* failsWith(impostor.admin.createOrganization({ payload: { name: "x" } }), "Unauthorized")
    }))
})

describe("without ADMIN_API_KEY", () => {
  it.layer(testServer(pgliteStorage, { adminApiKey: Option.none() }))((it) => {
    it.effect("every admin route answers 404, with or without a key", () =>
      Effect.gen(function*() {
        const routes = yield* adminRoutes
        expect(routes.length).toBe(9)
        for (const route of routes) {
          expectErrorResponse(yield* send(requestTo(route).pipe(HttpClientRequest.bearerToken(adminKey))), 404)
          expectErrorResponse(yield* send(requestTo(route)), 404)
        }
        const admin = yield* adminClient()
        yield* failsWith(
          admin.admin.bootstrap({ payload: { organization: "O", company: "C", email: uniqueEmail() } }),
          "NotFound"
        )
      }))
  })
})
