import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { Count, IsoDate, isStorableInstant, OrganizationRole } from "../../platform/Schemas.ts"

export const OrganizationEntry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: OrganizationRole,
  subscriptionType: Schema.String,
  status: Schema.String,
  creditLimit: Schema.Int,
  creditUsage: Schema.Int,
  /** Beyond the spec's entry: the pool job searches draw from (1 data credit a search). */
  dataCreditLimit: Schema.Int,
  dataCreditUsage: Schema.Int,
  seats: Schema.Int,
  companyLimit: Schema.Int
}).annotate({ identifier: "OrganizationEntry" })

/** Credits and data credits are two balances: each sum counts one of them. */
const DataCredits = Schema.Int.annotate({ description: "Data credits spent (searches); not included in `credits`." })

const UsageRow = Schema.Struct({
  model: Schema.String,
  feature: Schema.String,
  credits: Schema.Int,
  dataCredits: DataCredits,
  tokens: Schema.Int,
  requests: Schema.Int
})

export const UsageSummary = Schema.Struct({
  totals: Schema.Struct({
    credits: Schema.Int,
    dataCredits: DataCredits,
    tokens: Schema.Int,
    inputTokens: Schema.Int,
    outputTokens: Schema.Int,
    requests: Schema.Int
  }),
  byModel: Schema.Array(UsageRow),
  byFeature: Schema.Array(UsageRow)
}).annotate({ identifier: "UsageSummary" })

export const UsageEventResource = Schema.Struct({
  id: Schema.String,
  companyId: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  feature: Schema.String,
  model: Schema.String,
  pool: Schema.Literals(["credits", "data"]).annotate({ description: "The balance `credits` was taken from: credits, or data credits (searches)." }),
  credits: Schema.Int,
  tokens: Schema.Int,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  createdDate: IsoDate
}).annotate({ identifier: "UsageEvent" })

/** An ISO 8601 date-time (or date), inclusive bound of a usage window. */
const Instant = Schema.String.check(
  Schema.makeFilter((value: string) =>
    (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) && !Number.isNaN(Date.parse(value)) &&
      isStorableInstant(new Date(value))) ||
    "must be an ISO 8601 date-time"
  )
)

/** Filters shared by the usage endpoints (documented in docs/usage-and-credits.md). */
export const UsageFilterQuery = {
  startDate: Schema.optional(Instant),
  endDate: Schema.optional(Instant),
  userId: Schema.optional(Schema.String),
  featureKey: Schema.optional(Schema.String)
}

const errors = [BadRequest, Forbidden, NotFound]

/** Organizations the caller belongs to and their usage. */
export class OrganizationsApi extends HttpApiGroup.make("organizations")
  .annotateMerge(OpenApi.annotations({
    description: "The caller's organizations and their credit usage.",
    override: { "x-displayName": "Organizations" }
  })).add(
  HttpApiEndpoint.get("list", "/organizations", {
    success: Schema.Struct({ organizations: Schema.Array(OrganizationEntry) }),
    error: errors
  }).pipe(described({
    summary: "List your organizations",
    does: "The organizations where the calling user has a role (for a company key, the user who created it), with plan, credits, seats and company limit.",
    who: "anyKey"
  })),
  HttpApiEndpoint.get("usageSummary", "/organizations/:orgId/usage/history/summary", {
    params: { orgId: Schema.String },
    query: {
      ...UsageFilterQuery,
      limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
      offset: Schema.optional(Count)
    },
    success: UsageSummary,
    error: errors
  }).pipe(described({
    summary: "Summarize an organization's usage",
    does: "Credits and tokens used in a time window, by feature.",
    who: "usage:read",
    errors: { 400: "for an invalid window", 404: "for an organization the caller is not in" }
  })),
  HttpApiEndpoint.get("usageHistory", "/organizations/:orgId/usage/history", {
    params: { orgId: Schema.String },
    query: { ...UsageFilterQuery, ...PageQuery },
    success: Page(UsageEventResource),
    error: errors
  }).pipe(described({
    summary: "List an organization's usage events",
    does: "The organization's usage events (credits, tokens, model, feature) in a time window, newest first, paginated.",
    who: "usage:read",
    errors: { 400: "for an invalid window or page", 404: "for an organization the caller is not in" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
