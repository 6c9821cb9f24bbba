import { plainRefusal, refusal } from "../platform/Refusal.ts"

/** The server has no job search provider; the message names the setting that turns it on. */
export class JobSearchNotConfigured extends refusal(
  "Denied",
  "JobSearchNotConfigured",
  (_: {}) => "Job search is not configured on this server: set SERPAPI_API_KEY to enable it"
) {}

/** The provider rate-limited the search. */
export class JobSearchLimited extends plainRefusal("Limited", "JobSearchLimited") {}

/** The provider rejected the search's parameters. */
export class JobSearchRejected extends plainRefusal("Invalid", "JobSearchRejected") {}

/** The provider failed. */
export class JobSearchFailed extends plainRefusal("Failed", "JobSearchFailed") {}
