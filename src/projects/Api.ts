import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { Page, PageQuery } from "../platform/Pagination.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { JsonObject, NonEmpty, Text } from "../platform/Schemas.ts"

export const Sharing = Schema.Literals(["Private", "Shared"])

/** The spec's Project; `created` and `updated` are epoch milliseconds. */
export const Project = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  sharing: Sharing,
  settings: JsonObject,
  /** The owner user's id (a company key's: its creator); null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  uid: Schema.NullOr(Schema.String),
  companyId: Schema.String,
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Project" })

const editable = {
  companyId: Schema.optional(Schema.String),
  description: Schema.optional(Text(5_000)),
  instructions: Schema.optional(Text(50_000)),
  sharing: Schema.optional(Sharing),
  settings: Schema.optional(JsonObject)
}

export const NewProject = Schema.Struct({ name: NonEmpty, ...editable })

/** Every field optional: only those supplied change. */
export const ProjectPatch = Schema.Struct({ name: Schema.optional(NonEmpty), ...editable })

const projectId = { project_id: Schema.String }

export class ProjectsApi extends HttpApiGroup.make("projects").add(
  HttpApiEndpoint.post("create", "/projects", {
    payload: NewProject,
    success: Project.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }),
  HttpApiEndpoint.get("list", "/projects", { query: PageQuery, success: Page(Project), error: [Forbidden] }),
  HttpApiEndpoint.get("get", "/projects/:project_id", { params: projectId, success: Project, error: [Forbidden, NotFound] }),
  HttpApiEndpoint.patch("update", "/projects/:project_id", {
    params: projectId,
    payload: ProjectPatch,
    success: Project,
    error: [BadRequest, Forbidden, NotFound]
  }),
  HttpApiEndpoint.delete("delete", "/projects/:project_id", {
    params: projectId,
    success: Project,
    error: [Forbidden, NotFound]
  })
).middleware(Authentication).prefix("/api/v0") {}
