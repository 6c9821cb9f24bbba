import { Effect, Option } from "effect"
import { EmailTaken, UserNotFound } from "../users/Errors.ts"
import { OrganizationNotFound } from "../organizations/Errors.ts"
import { AlreadyInCompany, CompanyNotFound } from "../companies/Errors.ts"
import { changing } from "../../auth/AccessRevision.ts"
import type { CompanyRole, OrgRole } from "../../auth/Roles.ts"
import { CompaniesRepo } from "../companies/CompaniesRepo.ts"
import { issueCompanyKey, issuePersonalKey } from "../keys/Keys.ts"
import { type NewOrganization, OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { UsersRepo } from "../users/UsersRepo.ts"

/**
 * Operator actions, shared by the admin API and the offline CLI: creating
 * organizations, users, memberships, companies and keys.
 */

const organization = (id: string) =>
  Effect.flatMap(OrganizationsRepo.use((repo) => repo.get(id)), orRefuse(() => new OrganizationNotFound({ id })))

const user = (id: string) => Effect.flatMap(UsersRepo.use((repo) => repo.get(id)), orRefuse(() => new UserNotFound({ id })))

const company = (id: string) =>
  Effect.flatMap(CompaniesRepo.use((repo) => repo.get(id)), orRefuse(() => new CompanyNotFound({ id })))

export const createOrganization = (input: NewOrganization) => OrganizationsRepo.use((repo) => repo.create(input))

export const createUser = Effect.fn("Admin.createUser")(function*(input: { email: string; displayName?: string | undefined }) {
  const created = yield* UsersRepo.use((repo) => repo.create(input))
  return yield* Option.match(created, {
    onNone: () => Effect.fail(new EmailTaken({ email: input.email })),
    onSome: Effect.succeed
  })
})

export const addMember = Effect.fn("Admin.addMember")(function*(organizationId: string, userId: string, role: OrgRole) {
  yield* user(userId)
  const repo = yield* OrganizationsRepo
  yield* orRefuse(() => new OrganizationNotFound({ id: organizationId }))(yield* changing(repo.addMember(organizationId, userId, role)))
  return { organizationId, userId, role }
})

export const setOwner = Effect.fn("Admin.setOwner")(function*(organizationId: string, userId: string) {
  yield* user(userId)
  const repo = yield* OrganizationsRepo
  return yield* orRefuse(() => new OrganizationNotFound({ id: organizationId }))(yield* changing(repo.setOwner(organizationId, userId)))
})

export const addOwner = Effect.fn("Admin.addOwner")(function*(organizationId: string, userId: string) {
  yield* user(userId)
  const repo = yield* OrganizationsRepo
  return yield* orRefuse(() => new OrganizationNotFound({ id: organizationId }))(yield* changing(repo.addOwner(organizationId, userId)))
})

export const createCompany = Effect.fn("Admin.createCompany")(function*(organizationId: string, name: string) {
  yield* organization(organizationId)
  return yield* CompaniesRepo.use((repo) => repo.create({ organizationId, name }))
})

export const addCompanyUser = Effect.fn("Admin.addCompanyUser")(function*(
  companyId: string,
  input: { userId: string; role: CompanyRole; allowedFeatures?: ReadonlyArray<string> | undefined }
) {
  yield* company(companyId)
  yield* user(input.userId)
  const added = yield* changing(CompaniesRepo.use((repo) => repo.addUser({ companyId, ...input })))
  return yield* Option.match(added, {
    onNone: () => Effect.fail(new AlreadyInCompany({ who: input.userId, companyId })),
    onSome: Effect.succeed
  })
})

export const createPersonalKey = Effect.fn("Admin.createPersonalKey")(function*(
  userId: string,
  input: { name: string; expiresAt?: Date | undefined }
) {
  yield* user(userId)
  const { key, plaintext } = yield* issuePersonalKey(userId, input.name, input.expiresAt ?? null)
  return { id: key.id, name: key.name, key: plaintext, expiresAt: key.expiresAt }
})

/** Credits and limits a bootstrapped organization starts with. */
export const bootstrapAllowance = { creditLimit: 100_000, dataCreditLimit: 1_000, seats: 10, companyLimit: 10 }

/** One organization, company and owner with a company API key and a personal access key. */
export const bootstrap = Effect.fn("Admin.bootstrap")(function*(input: {
  organization: string
  company: string
  email: string
}) {
  const users = yield* UsersRepo
  const existing = yield* users.findByEmail(input.email)
  const owner = Option.isSome(existing) ? existing.value : yield* createUser({ email: input.email })
  const created = yield* createOrganization({ name: input.organization, subscriptionType: "pro", ...bootstrapAllowance })
  yield* setOwner(created.id, owner.id)
  yield* addMember(created.id, owner.id, "owner")
  const newCompany = yield* createCompany(created.id, input.company)
  yield* addCompanyUser(newCompany.id, { userId: owner.id, role: "owner" })
  const apiKey = yield* issueCompanyKey(newCompany.id, "default", owner.id)
  const personal = yield* issuePersonalKey(owner.id, "bootstrap", null)
  return {
    organizationId: created.id,
    companyId: newCompany.id,
    userId: owner.id,
    apiKey: apiKey.plaintext,
    personalAccessKey: personal.plaintext
  }
})
