import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../../platform/Errors.ts"
import { JsonObject, NonBlankText, Text } from "../../platform/Schemas.ts"

/** Query parameters of the job listing search (docs/jobs.md maps each to the provider's). */
export const JobSearchQuery = Schema.Struct({
  companyId: Schema.optional(Schema.String).annotate({ description: "Company whose data credits are billed" }),
  q: NonBlankText(1_000).annotate({ description: "Search query text, e.g. `barista new york`" }),
  gl: Schema.optional(
    Schema.String.check(Schema.isPattern(/^[A-Za-z]{2}$/, { message: "must be a two-letter country code" }))
  ).annotate({ description: "Two-letter country code (default `us`)" }),
  hl: Schema.optional(
    Schema.String.check(Schema.isPattern(/^[A-Za-z]{2}([_-][A-Za-z]{2})?$/, { message: "must be a language code such as en or en_us" }))
  ).annotate({ description: "Results language (default `en_us`)" }),
  nextPageToken: Schema.optional(Text(2_000)).annotate({ description: "Token of the next page, from a previous response" }),
  chips: Schema.optional(Text(2_000)).annotate({ description: "Filter chips string, from a previous response" }),
  lrad: Schema.optional(
    Schema.FiniteFromString.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(20_000))
  ).annotate({ description: "Search radius in kilometers" }),
  ltype: Schema.optional(Schema.Literal("1")).annotate({ description: "`1` restricts to work-from-home jobs" }),
  uds: Schema.optional(Text(2_000)).annotate({ description: "Advanced filter string, from a previous response" })
})

export class WebApi extends HttpApiGroup.make("web").add(
  HttpApiEndpoint.get("searchJobs", "/web/jobs", {
    query: JobSearchQuery,
    success: JsonObject.annotate({
      identifier: "JobSearchResults",
      description: "The provider's payload as it answered: `jobs_results` (title, company_name, location, " +
        "description, extensions, …) and `serpapi_pagination.next_page_token` for the next page"
    }),
    error: [BadRequest, Forbidden, NotFound, RateLimited, InternalError]
  })
    .pipe(described({
    summary: "Search job listings",
    does: "Searches job listings (Google Jobs through the configured SerpApi-compatible provider) and answers the " +
        "provider's payload as is. Each successful call costs exactly 1 data credit of the organization; a " +
        "failed call costs nothing. Pass `nextPageToken` from `serpapi_pagination.next_page_token` for the next " +
        "page. 403 when the organization has no data credits left, when the caller's role or plan lacks the " +
        "jobs feature, or when the server has no provider (`SERPAPI_API_KEY` unset); 429 when the provider keeps " +
        "rate limiting.",
    who: "jobs:search"
  }))
).middleware(Authentication).prefix("/api/v0")
  .annotate(OpenApi.Description, "Web: job listing search, billed in data credits.")
  .annotate(OpenApi.Override, { "x-displayName": "Web search" }) {}
