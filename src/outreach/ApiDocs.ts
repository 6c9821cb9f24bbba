import { Context } from "effect"
import { OpenApi } from "effect/http-api"

/** An endpoint's OpenAPI summary and description (what it does, who may call it, notable errors). */
export const described = (summary: string, description: string) =>
<E extends { annotateMerge<I>(annotations: Context.Context<I>): E }>(endpoint: E): E =>
  endpoint.annotateMerge(Context.make(OpenApi.Summary, summary).pipe(Context.add(OpenApi.Description, description)))
