import { Effect, Layer, Option } from "effect"
import { PrincipalCache } from "../../auth/Authentication.ts"
import type { Principal } from "../../auth/Principal.ts"
import { PrincipalLookup, UnknownCredential } from "../../auth/PrincipalLookup.ts"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { NotFound, Unauthorized } from "../../platform/Errors.ts"
import { hashKey, kindOf } from "./KeyFormat.ts"
import { KeysRepo } from "./KeysRepo.ts"

const unauthorized = (error: string) => new Unauthorized({ error })
const companyNotFound = (companyId: string) => new NotFound({ error: `Company ${companyId} not found` })

/** A company key acts as the user who created it: it stops working when that user leaves the company. */
const creatorGone = unauthorized("This API key's creator no longer belongs to its company: create a new key")

/** How a credential becomes a principal: its key, then the company and organization it acts in. */
const resolvePrincipal = Effect.fn("Authentication.resolve")(function*(
  credential: string,
  requestedCompanyId: string | undefined
) {
  const kind = kindOf(credential)
  if (kind === undefined) return yield* unauthorized("Invalid API key")
  const keyHash = hashKey(credential)
  const keys = yield* KeysRepo
  let companyId: string
  let keyId: string
  let userId: string
  let validUntil = Date.now() + PrincipalCache.ttlMs
  if (kind === "company") {
    const key = yield* keys.findCompanyKeyByHash(keyHash)
    if (Option.isNone(key)) return yield* new UnknownCredential()
    if (requestedCompanyId !== undefined && requestedCompanyId !== key.value.companyId) {
      return yield* companyNotFound(requestedCompanyId)
    }
    if (key.value.createdByUserId === null) return yield* creatorGone
    companyId = key.value.companyId
    keyId = key.value.id
    userId = key.value.createdByUserId
  } else {
    const key = yield* keys.findPersonalKeyByHash(keyHash)
    if (Option.isNone(key)) return yield* new UnknownCredential()
    const expiresAt = key.value.expiresAt?.getTime()
    if (expiresAt !== undefined && expiresAt <= Date.now()) return yield* unauthorized("API key expired")
    if (requestedCompanyId === undefined) {
      return yield* unauthorized("A personal access key needs the company id: send X-Company-ID or the companyId query")
    }
    companyId = requestedCompanyId
    keyId = key.value.id
    userId = key.value.userId
    if (expiresAt !== undefined) validUntil = Math.min(validUntil, expiresAt)
  }
  // The acting user's current role: a company key has its creator's powers, and none once they left the company.
  const principal = yield* principalIn(companyId, userId, { keyKind: kind, keyId, credentialHash: keyHash })
  if (Option.isNone(principal)) return yield* (kind === "company" ? creatorGone : companyNotFound(companyId))
  return { principal: principal.value, validUntil }
})

/** The user as a principal of the company, with their current role and plan; none when they are not one of its users. */
const principalIn = Effect.fn("Authentication.principalIn")(function*(
  companyId: string,
  userId: string,
  key: Pick<Principal, "keyKind" | "keyId" | "credentialHash">
) {
  const companies = yield* CompaniesRepo
  const organizations = yield* OrganizationsRepo
  const membership = yield* companies.getUser(companyId, userId)
  if (Option.isNone(membership)) return Option.none<Principal>()
  const company = yield* companies.get(companyId)
  if (Option.isNone(company)) return Option.none<Principal>()
  const organization = yield* organizations.get(company.value.organizationId)
  if (Option.isNone(organization)) return Option.none<Principal>()
  return Option.some<Principal>({
    ...key,
    companyId,
    companyName: company.value.name,
    organizationId: organization.value.id,
    plan: organization.value.subscriptionType,
    userId,
    role: membership.value.role,
    allowedFeatures: membership.value.allowedFeatures
  })
})

/** The `PrincipalLookup` port over the keys, companies and organizations repositories. */
export const PrincipalLookupLive = Layer.effect(PrincipalLookup, Effect.gen(function*() {
  const context = yield* Effect.context<KeysRepo | CompaniesRepo | OrganizationsRepo>()
  const organizations = yield* OrganizationsRepo
  const companies = yield* CompaniesRepo
  return {
    resolve: (credential, requestedCompanyId) =>
      Effect.provideContext(resolvePrincipal(credential, requestedCompanyId), context),
    actingUser: (companyId, userId, workId) =>
      Effect.provideContext(principalIn(companyId, userId, { keyKind: "personal", keyId: workId, credentialHash: "" }), context),
    isCompanyUser: (companyId, userId) => Effect.map(companies.getUser(companyId, userId), Option.isSome),
    organizationRole: organizations.roleOf
  }
}))
