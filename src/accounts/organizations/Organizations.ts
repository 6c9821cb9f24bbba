import { Context, Effect } from "effect"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { type RevisionCache, revisionCacheLayer } from "../../auth/RevisionCache.ts"
import { settledSoFar } from "../usage/Usage.ts"
import { Balances } from "./Balances.ts"
import { OrganizationsRepo, type OrganizationWithRole } from "./OrganizationsRepo.ts"

/**
 * Each user's organizations with their role, per process, at the access
 * revision they were read at (`RevisionCache`): every write that changes them
 * (ownership, owners list, memberships) bumps it. Credit usage changes on
 * every billed call and never bumps it, so the cached records' usage (credits and data credits) is never
 * shown: `listCallersOrganizations` takes it from `Balances`.
 */
export class MembershipsCache extends Context.Service<MembershipsCache, RevisionCache<ReadonlyArray<OrganizationWithRole>>>()(
  "organizations/MembershipsCache"
) {
  /** Users kept; an entry is a few organizations, a few hundred bytes each. */
  static readonly capacity = 10_000
  static readonly layer = revisionCacheLayer(MembershipsCache, MembershipsCache.capacity)
}

/** The organizations where the caller's user (a company key's: its creator) has a membership or ownership record. */
export const listCallersOrganizations = Effect.gen(function*() {
  const { userId } = yield* CurrentPrincipal
  const repo = yield* OrganizationsRepo
  const cache = yield* MembershipsCache
  const entries = yield* cache.through(userId, () => repo.listForUser(userId))
  // Usage as of every call this process settled: settlements are committed in groups.
  yield* settledSoFar
  const usage = yield* Balances.use((balances) => balances.creditUsage(entries.map(({ organization }) => organization.id)))
  return entries.map(({ organization, role }) => ({
    organization: {
      ...organization,
      creditUsage: usage.get(organization.id)?.credits ?? organization.creditUsage,
      dataCreditUsage: usage.get(organization.id)?.dataCredits ?? organization.dataCreditUsage
    },
    role
  }))
})
