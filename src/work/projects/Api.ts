import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { JsonObject, NonEmpty, Text } from "../../platform/Schemas.ts"

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

export const NewProject = Schema.Struct({ name: NonEmpty, ...editable }).annotate({
  examples: [{
    name: "Website relaunch",
    description: "New site by March",
    instructions: "Answer in a friendly, concise tone.",
    settings: { language: "en" }
  }]
})

/** Every field optional: only those supplied change. */
export const ProjectPatch = Schema.Struct({ name: Schema.optional(NonEmpty), ...editable })

const projectId = { project_id: Schema.String }

export class ProjectsApi extends HttpApiGroup.make("projects")
  .annotateMerge(OpenApi.annotations({
    description: "Projects of a company: name, instructions, sharing and settings.",
    override: { "x-displayName": "Projects" }
  })).add(
  HttpApiEndpoint.post("create", "/projects", {
    payload: NewProject,
    success: Project.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a project",
    does: "Creates a project in the caller's company, owned by the calling user (a company key's creator).",
    who: "projects:write",
    errors: { 404: "for another company's id" }
  })),
  HttpApiEndpoint.get("list", "/projects", { query: PageQuery, success: Page(Project), error: [Forbidden] }).pipe(described({
    summary: "List projects",
    does: "The company's projects, newest first, paginated.",
    who: "projects:read"
  })),
  HttpApiEndpoint.get("get", "/projects/:project_id", { params: projectId, success: Project, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Get a project",
    does: "One project of the caller's company.",
    who: "projects:read",
    errors: { 404: "for an unknown id or another company's project" }
  })),
  HttpApiEndpoint.patch("update", "/projects/:project_id", {
    params: projectId,
    payload: ProjectPatch,
    success: Project,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a project",
    does: "Changes a project's fields.",
    who: { owner: "projects:write" },
    errors: { 404: "for an unknown id or another company's project" }
  })),
  HttpApiEndpoint.delete("delete", "/projects/:project_id", {
    params: projectId,
    success: Project,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a project",
    does: "Deletes a project and answers it.",
    who: { owner: "projects:write" },
    errors: { 404: "for an unknown id or another company's project" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
