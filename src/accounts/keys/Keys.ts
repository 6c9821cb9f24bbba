import { Effect, Option } from "effect"
import { CompanyKeyNotFound, ExpiryInPast, KeyNameTaken, NoCompanyKey, NotAPerson, PersonalKeyNotFound } from "./Errors.ts"
import { Authorized, check } from "../../auth/Policy.ts"
import { changing } from "../../auth/AccessRevision.ts"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { generateKey } from "./KeyFormat.ts"
import { KeysRepo } from "./KeysRepo.ts"

/**
 * Issuing, reading and revoking keys. A plaintext key leaves here once, in
 * the creating call's answer, and is never stored; revocation reaches every
 * server process before the next request (the principal cache is cleared
 * through the access revision).
 */

/** A new company key acting as `createdByUserId` (the creating user, or the company's owner for operator-made keys). */
export const issueCompanyKey = Effect.fn("Keys.issueCompanyKey")(function*(
  companyId: string,
  name: string,
  createdByUserId: string
) {
  const repo = yield* KeysRepo
  const generated = generateKey("company")
  const created = yield* repo.createCompanyKey({
    companyId,
    createdByUserId,
    name,
    keyHash: generated.hash,
    masked: generated.masked
  })
  if (Option.isNone(created)) {
    return yield* new KeyNameTaken({ name })
  }
  return { key: created.value, plaintext: generated.plaintext }
})

export const issuePersonalKey = Effect.fn("Keys.issuePersonalKey")(function*(
  userId: string,
  name: string,
  expiresAt: Date | null
) {
  if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
    return yield* new ExpiryInPast({})
  }
  const repo = yield* KeysRepo
  const generated = generateKey("personal")
  const key = yield* repo.createPersonalKey({
    userId,
    name,
    keyHash: generated.hash,
    masked: generated.masked,
    expiresAt
  })
  return { key, plaintext: generated.plaintext }
})

const keyNotFound = (name: string) => new CompanyKeyNotFound({ name })

/** The company's key of that name, masked. */
export const companyKeyByName = Effect.fn("Keys.companyKeyByName")(function*(name: string) {
  const { principal } = yield* Authorized("apiKeys:manage")
  const key = yield* KeysRepo.use((repo) => repo.findCompanyKey(principal.companyId, name))
  return yield* Option.match(key, { onNone: () => Effect.fail(keyNotFound(name)), onSome: Effect.succeed })
})

/** The company's default key (its oldest), masked. */
export const defaultCompanyKey = Effect.fn("Keys.defaultCompanyKey")(function*() {
  const { principal } = yield* Authorized("apiKeys:manage")
  const keys = yield* KeysRepo.use((repo) => repo.listCompanyKeys(principal.companyId))
  if (keys.length === 0) return yield* new NoCompanyKey({})
  return keys[0]
})

export const createCompanyKey = Effect.fn("Keys.createCompanyKey")(function*(name: string) {
  const { principal } = yield* Authorized("apiKeys:manage")
  return yield* issueCompanyKey(principal.companyId, name, principal.userId)
})

/** PUT semantics: the existing key (masked) or a new one (plaintext, once). */
export const ensureCompanyKey = Effect.fn("Keys.ensureCompanyKey")(function*(name: string) {
  const { principal } = yield* Authorized("apiKeys:manage")
  const existing = yield* KeysRepo.use((repo) => repo.findCompanyKey(principal.companyId, name))
  if (Option.isSome(existing)) return existing.value.masked
  const created = yield* issueCompanyKey(principal.companyId, name, principal.userId).pipe(
    // Another request may have created it between the lookup and the insert.
    Effect.catchTag("KeyNameTaken", (error) =>
      Effect.flatMap(
        KeysRepo.use((repo) => repo.findCompanyKey(principal.companyId, name)),
        Option.match({ onNone: () => Effect.fail(error), onSome: (raced) => Effect.succeed({ plaintext: raced.masked }) })
      ))
  )
  return created.plaintext
})

export const deleteCompanyKey = Effect.fn("Keys.deleteCompanyKey")(function*(name: string) {
  const { principal } = yield* Authorized("apiKeys:manage")
  const deleted = yield* changing(KeysRepo.use((repo) => repo.deleteCompanyKey(principal.companyId, name)))
  if (Option.isNone(deleted)) return yield* keyNotFound(name)
  return deleted.value
})

/**
 * Every key of the caller: a user's personal access keys and the company
 * keys of each company where the user may manage keys; for a company key,
 * its company's keys.
 */
export const listCallerKeys = Effect.fn("Keys.listCallerKeys")(function*() {
  const principal = yield* CurrentPrincipal
  const keys = yield* KeysRepo
  if (principal.keyKind === "company") {
    if (check(principal, "apiKeys:manage") !== undefined) return { personalAccessKeys: [], companyKeys: [] }
    return { personalAccessKeys: [], companyKeys: yield* keys.listCompanyKeys(principal.companyId) }
  }
  const userId = principal.userId
  const companies = yield* CompaniesRepo
  const memberships = yield* companies.listForUser(userId)
  const managed = yield* Effect.forEach(memberships, (company) =>
    Effect.map(companies.getUser(company.id, userId), (membership) =>
      Option.isSome(membership) &&
        check({ ...principal, role: membership.value.role, allowedFeatures: membership.value.allowedFeatures }, "apiKeys:manage") === undefined
        ? [company.id]
        : []))
  const companyKeys = yield* Effect.forEach(managed.flat(), (companyId) => keys.listCompanyKeys(companyId))
  return { personalAccessKeys: yield* keys.listPersonalKeys(userId), companyKeys: companyKeys.flat() }
})

const requireUser = CurrentPrincipal.use((principal) =>
  principal.keyKind === "company"
    ? Effect.fail(new NotAPerson({}))
    : Effect.succeed(principal.userId)
)

export const createOwnPersonalKey = Effect.fn("Keys.createOwnPersonalKey")(function*(name: string, expiresAt: Date | null) {
  const userId = yield* requireUser
  return yield* issuePersonalKey(userId, name, expiresAt)
})

export const revokeOwnPersonalKey = Effect.fn("Keys.revokeOwnPersonalKey")(function*(keyId: string) {
  const userId = yield* requireUser
  const deleted = yield* changing(KeysRepo.use((repo) => repo.deletePersonalKey(userId, keyId)))
  if (Option.isNone(deleted)) return yield* new PersonalKeyNotFound({ id: keyId })
  return deleted.value
})
