import { Effect, Option } from "effect"
import { AlreadyInCompany, CompanyLimitReached, CompanyUserNotFound, LastOwner, OwnerOnly } from "./Errors.ts"
import { OrganizationNotFound } from "../organizations/Errors.ts"
import { changing } from "../../auth/AccessRevision.ts"
import { Authorized } from "../../auth/Policy.ts"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { offsetOf, pageCount, type PageRequest } from "../../platform/Pagination.ts"
import { UsersRepo } from "../users/UsersRepo.ts"
import type { CompanyRole } from "../../auth/Roles.ts"
import { toCompanyUser } from "./Api.ts"
import { CompaniesRepo, type CompanyUserChange, type CompanyUserView } from "./CompaniesRepo.ts"

/**
 * Company users and companies. Rules (docs/authorization.md): owners and
 * admins manage company users; only an owner may grant the owner role or
 * change or remove an owner; the last owner can be neither demoted nor
 * removed.
 */

/** A page of the company's users, as the API answers it. */
export const listCompanyUsers = Effect.fn("Companies.listCompanyUsers")(function*(
  request: PageRequest,
  search: string | undefined
) {
  const { principal } = yield* Authorized("companyUsers:read")
  const { rows, total } = yield* CompaniesRepo.use((repo) =>
    repo.listUsers(principal.companyId, { search, offset: offsetOf(request), limit: request.pageSize })
  )
  return {
    company_users: rows.map(toCompanyUser),
    pagination: {
      page: request.page,
      per_page: request.pageSize,
      total,
      pages: pageCount(total, request.pageSize),
      has_next: request.page * request.pageSize < total,
      has_prev: request.page > 1
    }
  }
})

const ownerOnly = (what: string) => new OwnerOnly({ what })

/** Owners may do anything; admins may not touch the owner role. */
const mayAssign = (actorRole: CompanyRole, role: CompanyRole | undefined) =>
  role !== "owner" || actorRole === "owner"

export const addCompanyUser = Effect.fn("Companies.addCompanyUser")(function*(input: {
  email: string
  role: CompanyRole
  displayName?: string | undefined
  allowedFeatures?: ReadonlyArray<string> | undefined
}) {
  const { principal } = yield* Authorized("companyUsers:manage")
  if (!mayAssign(principal.role, input.role)) return yield* ownerOnly("add an owner")
  const users = yield* UsersRepo
  const existing = yield* users.findByEmail(input.email)
  const user = Option.isSome(existing)
    ? existing.value
    : yield* Effect.flatMap(users.create({ email: input.email, displayName: input.displayName }), (created) =>
      Option.match(created, {
        // Created concurrently by another request: use that user.
        onNone: () => Effect.flatMap(users.findByEmail(input.email), (raced) => Effect.succeed(Option.getOrThrow(raced))),
        onSome: Effect.succeed
      }))
  const added = yield* changing(CompaniesRepo.use((repo) =>
    repo.addUser({ companyId: principal.companyId, userId: user.id, role: input.role, allowedFeatures: input.allowedFeatures })
  ))
  return yield* Option.match(added, {
    onNone: () => Effect.fail(new AlreadyInCompany({ who: input.email })),
    onSome: Effect.succeed
  })
})

const targetUser = (companyId: string, userId: string) =>
  Effect.flatMap(
    CompaniesRepo.use((repo) => repo.getUser(companyId, userId)),
    orRefuse(() => new CompanyUserNotFound({ userId }))
  )

/** Refuses to leave the company without an owner. */
const keepAnOwner = (target: CompanyUserView, losesOwnership: boolean) =>
  Effect.gen(function*() {
    if (target.role !== "owner" || !losesOwnership) return
    const owners = yield* CompaniesRepo.use((repo) => repo.countOwners(target.companyId))
    if (owners <= 1) return yield* new LastOwner({})
  })

export const updateCompanyUser = Effect.fn("Companies.updateCompanyUser")(function*(
  userId: string,
  change: CompanyUserChange
) {
  const { principal } = yield* Authorized("companyUsers:manage")
  const target = yield* targetUser(principal.companyId, userId)
  if (target.role === "owner" && principal.role !== "owner") return yield* ownerOnly("change an owner")
  if (!mayAssign(principal.role, change.role)) return yield* ownerOnly("grant the owner role")
  yield* keepAnOwner(target, change.role !== undefined && change.role !== "owner")
  const updated = yield* changing(CompaniesRepo.use((repo) => repo.updateUser(principal.companyId, userId, change)))
  return Option.getOrElse(updated, () => target)
})

export const removeCompanyUser = Effect.fn("Companies.removeCompanyUser")(function*(userId: string) {
  const { principal } = yield* Authorized("companyUsers:manage")
  const target = yield* targetUser(principal.companyId, userId)
  if (target.role === "owner" && principal.role !== "owner") return yield* ownerOnly("remove an owner")
  yield* keepAnOwner(target, true)
  yield* changing(CompaniesRepo.use((repo) => repo.removeUser(principal.companyId, userId)))
  return target
})

/** A user's companies; for a company key, its own company. */
export const listCallerCompanies = Effect.fn("Companies.listCallerCompanies")(function*() {
  const principal = yield* CurrentPrincipal
  const companies = yield* CompaniesRepo
  if (principal.keyKind === "company") return Option.toArray(yield* companies.get(principal.companyId))
  return yield* companies.listForUser(principal.userId)
})

/** A new company in the organization, within its company limit; the creating user becomes its owner. */
export const createCompany = Effect.fn("Companies.createCompany")(function*(organizationId: string, name: string) {
  const { principal } = yield* Authorized("companies:create")
  const organization = yield* Effect.flatMap(
    OrganizationsRepo.use((repo) => repo.get(organizationId)),
    orRefuse(() => new OrganizationNotFound({ id: organizationId }))
  )
  const companies = yield* CompaniesRepo
  const count = yield* companies.countInOrganization(organizationId)
  if (count >= organization.companyLimit) {
    return yield* new CompanyLimitReached({ limit: organization.companyLimit })
  }
  const company = yield* companies.create({ organizationId, name })
  yield* changing(companies.addUser({ companyId: company.id, userId: principal.userId, role: "owner" }))
  return company
})
