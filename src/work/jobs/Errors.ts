import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** The job-search provider has no key configured. */
export class JobSearchNotConfigured extends refusal(
  "Denied",
  "JobSearchNotConfigured",
  (_: {}) => "Job search is not configured: set SERPAPI_API_KEY"
) {}

/** The provider rate-limited the search. */
export class JobSearchLimited extends plainRefusal("Limited", "JobSearchLimited") {}

/** The provider rejected the search's parameters. */
export class JobSearchRejected extends plainRefusal("Invalid", "JobSearchRejected") {}

/** The provider failed. */
export class JobSearchFailed extends plainRefusal("Failed", "JobSearchFailed") {}
