import { Effect } from "effect"
import { Authorized } from "../../auth/Policy.ts"
import { offsetOf, type PageRequest } from "../../platform/Pagination.ts"
import { Credits } from "./Credits.ts"
import { type UsageFilter, UsageRepo, type Window } from "./UsageRepo.ts"
import { InvalidUsageWindow } from "./Errors.ts"

/** Makes balances and usage include every call this process settled: settlements are committed in groups. */
export const settledSoFar = Credits.use((credits) => credits.flush)

/** Reading an organization's usage: only with `usage:read` proven for the caller. */

export interface UsageQuery {
  readonly startDate?: string | undefined
  readonly endDate?: string | undefined
  readonly userId?: string | undefined
  readonly featureKey?: string | undefined
}

const toFilter = (query: UsageQuery) =>
  Effect.gen(function*() {
    const startDate = query.startDate === undefined ? undefined : new Date(query.startDate)
    const endDate = query.endDate === undefined ? undefined : new Date(query.endDate)
    if (startDate !== undefined && endDate !== undefined && startDate > endDate) {
      return yield* new InvalidUsageWindow({})
    }
    const filter: UsageFilter = { startDate, endDate, userId: query.userId, featureKey: query.featureKey }
    return filter
  })

export const summary = Effect.fn("Usage.summary")(function*(organizationId: string, query: UsageQuery, window: Window) {
  yield* Authorized("usage:read")
  const filter = yield* toFilter(query)
  yield* settledSoFar
  return yield* UsageRepo.use((repo) => repo.summary(organizationId, filter, window))
})

export const history = Effect.fn("Usage.history")(function*(
  organizationId: string,
  query: UsageQuery,
  request: PageRequest
) {
  yield* Authorized("usage:read")
  const filter = yield* toFilter(query)
  yield* settledSoFar
  return yield* UsageRepo.use((repo) =>
    repo.history(organizationId, filter, { offset: offsetOf(request), limit: request.pageSize })
  )
})
