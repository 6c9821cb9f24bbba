import { Effect } from "effect"
import { OrganizationsRepo } from "../../src/accounts/organizations/OrganizationsRepo.ts"
import { Credits } from "../../src/accounts/usage/Credits.ts"
import { type UsageFilter, UsageRepo } from "../../src/accounts/usage/UsageRepo.ts"

/** Commits every call settled so far in this process: settlements are committed in groups. */
export const settled = Credits.use((credits) => credits.flush)

/** The organization's usage events (up to 1,000, newest first), including every call settled so far. */
export const usageHistory = (organizationId: string, filter: UsageFilter = {}) =>
  Effect.andThen(settled, UsageRepo.use((repo) => repo.history(organizationId, filter, { offset: 0, limit: 1_000 })))

/** The organization with its balances as of every call settled so far. */
export const settledOrganization = (organizationId: string) =>
  Effect.andThen(settled, OrganizationsRepo.use((repo) => repo.get(organizationId)))
