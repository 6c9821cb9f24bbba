import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { PageNumber, PageSize } from "../../platform/Pagination.ts"
import { JsonObject, NonBlankText } from "../../platform/Schemas.ts"

/** The spec's Memory; `created` and `updated` are epoch milliseconds. */
export const Memory = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  category: Schema.String,
  isActive: Schema.Boolean,
  sourceChatId: Schema.NullOr(Schema.String),
  sourceMessageId: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Memory" })

/** The spec's memory list envelope. */
export const MemoryPage = Schema.Struct({
  items: Schema.Array(Memory),
  total: Schema.Int,
  page: Schema.Int,
  pageSize: Schema.Int
}).annotate({ identifier: "MemoryPage" })

const Content = NonBlankText(10_000)
const Category = NonBlankText(100)

export const NewMemory = Schema.Struct({
  content: Content,
  category: Schema.optional(Category),
  metadata: Schema.optional(JsonObject),
  sourceChatId: Schema.optional(NonBlankText(200)),
  sourceMessageId: Schema.optional(NonBlankText(200))
})

export const MemoryPatch = Schema.Struct({
  content: Schema.optional(Content),
  category: Schema.optional(Category),
  isActive: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(JsonObject)
})

export const MemoryQuery = {
  page: Schema.optional(PageNumber),
  pageSize: Schema.optional(PageSize(100)),
  includeInactive: Schema.optional(Schema.Literals(["true", "false"])),
  category: Schema.optional(Category)
}

const companyId = { companyId: Schema.String }
const memoryId = { companyId: Schema.String, memory_id: Schema.String }

export class MemoriesApi extends HttpApiGroup.make("memories")
  .annotateMerge(OpenApi.annotations({
    description: "Facts a company keeps for its AI features, with categories and metadata.",
    override: { "x-displayName": "Memories" }
  })).add(
  HttpApiEndpoint.post("create", "/companies/:companyId/memories", {
    params: companyId,
    payload: NewMemory,
    success: Memory.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Keep a memory",
    does: "Stores a memory (content, category, metadata) for the company.",
    who: "memories:use",
    errors: { 404: "for another company" }
  })),
  HttpApiEndpoint.get("list", "/companies/:companyId/memories", {
    params: companyId,
    query: MemoryQuery,
    success: MemoryPage,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "List memories",
    does: "The company's memories, newest first, filtered by category and (optionally) including inactive ones, paginated.",
    who: "memories:use"
  })),
  HttpApiEndpoint.patch("update", "/companies/:companyId/memories/:memory_id", {
    params: memoryId,
    payload: MemoryPatch,
    success: Memory,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a memory",
    does: "Changes a memory's content, category, metadata or active flag.",
    who: "memories:use",
    errors: { 404: "for an unknown id or another company" }
  })),
  HttpApiEndpoint.delete("delete", "/companies/:companyId/memories/:memory_id", {
    params: memoryId,
    success: Memory,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a memory",
    does: "Deletes a memory and answers it.",
    who: "memories:use",
    errors: { 404: "for an unknown id or another company" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
