import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { JsonObject, NonBlankText } from "../../platform/Schemas.ts"
import { Lead } from "./Api.ts"

export const SmartList = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  filter: JsonObject,
  created_date: Schema.String,
  updated_date: Schema.String
}).annotate({ identifier: "SmartList" })

export const NewSmartList = Schema.Struct({
  name: NonBlankText(200),
  /** `{all: [...]}` or `{any: [...]}` of conditions (docs/leads.md); checked when saved. */
  filter: JsonObject,
  companyId: Schema.optional(Schema.String)
})

export const SmartListPatch = Schema.Struct({
  name: Schema.optional(NonBlankText(200)),
  filter: Schema.optional(JsonObject),
  companyId: Schema.optional(Schema.String)
})

const smartListId = { smartListId: Schema.String }

const language = "A filter is `{all: [...]}` or `{any: [...]}` (nestable, at most 8 levels and 100 conditions) of conditions `{field, op, value}` over lead fields (`email`, `firstName`, `lastName`, `company`, `title`, `phone`, `website`, `linkedinUrl`, `status`, `tags`, `createdAt`, `updatedAt`, custom fields as `fields.<name>`; ops `eq`, `neq`, `contains`, `in`, `exists`, `before`, `after`) or `{activity, op: \"within\" | \"not_within\", days, campaignId?, sequenceId?}` over the timeline. A bad filter answers 400 naming the path of the bad condition (`filter.all[2].op`)."

export class SmartListsApi extends HttpApiGroup.make("smartLists")
  .annotateMerge(OpenApi.annotations({
    description: "Smart lists: saved filters over the company's leads and their timelines, evaluated live; campaigns and sequences take a smartListId wherever they take a listId.",
    override: { "x-displayName": "Smart lists" }
  })).add(
  HttpApiEndpoint.post("create", "/smart-lists", {
    payload: NewSmartList,
    success: SmartList.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({ summary: "Create a smart list", does: `Saves a named filter. ${language}`, who: "campaigns:write" })),
  HttpApiEndpoint.get("list", "/smart-lists", { query: PageQuery, success: Page(SmartList), error: [BadRequest, Forbidden] })
    .pipe(described({ summary: "List smart lists", does: "The company's smart lists, newest first.", who: "campaigns:read" })),
  HttpApiEndpoint.get("get", "/smart-lists/:smartListId", { params: smartListId, success: SmartList, error: [Forbidden, NotFound] })
    .pipe(described({ summary: "Get a smart list", does: "One smart list; another company's is 404.", who: "campaigns:read" })),
  HttpApiEndpoint.patch("update", "/smart-lists/:smartListId", {
    params: smartListId,
    payload: SmartListPatch,
    success: SmartList,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({ summary: "Change a smart list", does: `Renames it or replaces its filter. ${language}`, who: "campaigns:write" })),
  HttpApiEndpoint.delete("delete", "/smart-lists/:smartListId", { params: smartListId, success: SmartList, error: [Forbidden, NotFound] })
    .pipe(described({ summary: "Delete a smart list", does: "Deletes the smart list (its leads stay); answers it.", who: "campaigns:write" })),
  HttpApiEndpoint.get("leads", "/smart-lists/:smartListId/leads", {
    params: smartListId,
    query: PageQuery,
    success: Page(Lead),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "The leads of a smart list",
    does: "The company's leads that match the filter now, newest first, paged. `total`, `pages` and `hasNext` are exact.",
    who: "campaigns:read"
  }))
).middleware(Authentication).prefix("/api/v0") {}
