import { Effect } from "effect"
import { JobSearchFailed, JobSearchLimited, JobSearchNotConfigured, JobSearchRejected } from "./Errors.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { outboundRefusal } from "../../platform/Outbound.ts"
import type { JobSearchQuery } from "./Api.ts"
import { JobProvider } from "./JobProvider.ts"
import { Credits, payerOf } from "../../accounts/usage/Credits.ts"

/**
 * Job listing search: the query forwarded to the provider under its own
 * parameter names, its payload answered as is, 1 data credit per successful
 * call — held before the provider is asked, released when it fails (docs/jobs.md).
 */

/** Our query parameters under the provider's names; the spec's defaults filled in. */
export const providerParameters = (query: typeof JobSearchQuery.Type): Record<string, string> => {
  const parameters: Record<string, string> = {
    q: query.q,
    gl: (query.gl ?? "us").toLowerCase(),
    hl: (query.hl ?? "en_us").toLowerCase()
  }
  if (query.nextPageToken !== undefined) parameters.next_page_token = query.nextPageToken
  if (query.chips !== undefined) parameters.chips = query.chips
  if (query.lrad !== undefined) parameters.lrad = String(query.lrad)
  if (query.ltype !== undefined) parameters.ltype = query.ltype
  if (query.uds !== undefined) parameters.uds = query.uds
  return parameters
}

/** The provider's failure: its rate limiting, a request it rejects, or its own failure. */
const toRefusal = outboundRefusal({ limited: JobSearchLimited, rejected: JobSearchRejected, failed: JobSearchFailed })

export const notConfigured = () => new JobSearchNotConfigured({})

/** What one successful search costs: 1 data credit, held before the provider is asked. */
const searchCost = { feature: "jobs", credits: 1, pool: "data" } as const

export const search = Effect.fn("Jobs.search")(function*(query: typeof JobSearchQuery.Type) {
  yield* Authorized("jobs:search")
  const principal = yield* requireCompany(query.companyId)
  const provider = yield* JobProvider
  if (!provider.configured) return yield* notConfigured()
  const credits = yield* Credits
  return yield* credits.withHold(payerOf(principal), searchCost, (hold) =>
    provider.search("google_jobs", providerParameters(query)).pipe(
      Effect.tap(() => hold.report({ credits: searchCost.credits })),
      Effect.mapError(toRefusal)
    ))
})
