import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
  }).annotateMerge(OpenApi.annotations({
    summary: "Create a project",
    description: "Creates a project in the caller's company, owned by the calling user (a company key's creator). Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner, admin or member, in a plan with the `projects` feature. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for another company's id."
  })),
  HttpApiEndpoint.get("list", "/projects", { query: PageQuery, success: Page(Project), error: [Forbidden] }).annotateMerge(OpenApi.annotations({
    summary: "List projects",
    description: "The company's projects, newest first, paginated. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `projects` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 naming the missing role or feature; 404 for an id of another company; 429 over the rate limit."
  })),
  HttpApiEndpoint.get("get", "/projects/:project_id", { params: projectId, success: Project, error: [Forbidden, NotFound] }).annotateMerge(OpenApi.annotations({
    summary: "Get a project",
    description: "One project of the caller's company. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `projects` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for an unknown id or another company's project."
  })),
  HttpApiEndpoint.patch("update", "/projects/:project_id", {
    params: projectId,
    payload: ProjectPatch,
    success: Project,
    error: [BadRequest, Forbidden, NotFound]
  }).annotateMerge(OpenApi.annotations({
    summary: "Change a project",
    description: "Changes a project's fields. Who: its owner, or a company owner or admin, with the `projects` feature. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other people; 404 for an unknown id or another company's project."
  })),
  HttpApiEndpoint.delete("delete", "/projects/:project_id", {
    params: projectId,
    success: Project,
    error: [Forbidden, NotFound]
  }).annotateMerge(OpenApi.annotations({
    summary: "Delete a project",
    description: "Deletes a project and answers it. Who: its owner, or a company owner or admin. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other people; 404 for an unknown id or another company's project."
  }))
).middleware(Authentication).prefix("/api/v0") {}
