import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** Content the tools cannot take (too long, over the worker's time or memory); the message names why. */
export class ContentRefused extends plainRefusal("Invalid", "ContentRefused") {}

/** Content research needs the search provider's key. */
export class ResearchNotConfigured extends refusal(
  "Denied",
  "ResearchNotConfigured",
  (_: {}) => "Content research is not configured: set SERPAPI_API_KEY"
) {}

/** The search provider or the model kept rate limiting the research. */
export class ResearchLimited extends plainRefusal("Limited", "ResearchLimited") {}

/** The search provider or the model failed. */
export class ResearchFailed extends plainRefusal("Failed", "ResearchFailed") {}
