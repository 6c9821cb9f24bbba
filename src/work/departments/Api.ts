import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { NonEmpty, Text } from "../../platform/Schemas.ts"

/** A department; `created` and `updated` are epoch milliseconds, as Project's. */
export const Department = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Department" })

const editable = {
  companyId: Schema.optional(Schema.String),
  description: Schema.optional(Text(5_000)),
  instructions: Schema.optional(Text(50_000))
}

export const NewDepartment = Schema.Struct({ name: NonEmpty, ...editable }).annotate({
  examples: [{ name: "Marketing", description: "Campaigns and content", instructions: "Write for small-business owners." }]
})

/** Every field optional: only those supplied change. */
export const DepartmentPatch = Schema.Struct({ name: Schema.optional(NonEmpty), ...editable })

const departmentId = { departmentId: Schema.String }

export class DepartmentsApi extends HttpApiGroup.make("departments")
  .annotateMerge(OpenApi.annotations({
    description: "Departments of a company: their instructions join the prompts of the employees in them.",
    override: { "x-displayName": "Departments" }
  })).add(
  HttpApiEndpoint.post("create", "/departments", {
    payload: NewDepartment,
    success: Department.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a department",
    does: "Creates a department with a name, an optional description and instructions for its employees.",
    who: "agents:write",
    errors: { 404: "for another company's id" }
  })),
  HttpApiEndpoint.get("list", "/departments", { query: PageQuery, success: Page(Department), error: [Forbidden] }).pipe(described({
    summary: "List departments",
    does: "The company's departments, newest first, paginated.",
    who: "agents:read"
  })),
  HttpApiEndpoint.get("get", "/departments/:departmentId", {
    params: departmentId,
    success: Department,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a department",
    does: "One department of the caller's company.",
    who: "agents:read",
    errors: { 404: "for an unknown id or another company's department" }
  })),
  HttpApiEndpoint.patch("update", "/departments/:departmentId", {
    params: departmentId,
    payload: DepartmentPatch,
    success: Department,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a department",
    does: "Changes a department's name, description or instructions; employees' prompts use the new instructions from their next run.",
    who: "agents:write",
    errors: { 404: "for an unknown id or another company's department" }
  })),
  HttpApiEndpoint.delete("delete", "/departments/:departmentId", {
    params: departmentId,
    success: Department,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a department",
    does: "Deletes a department and answers it; its employees stay, without a department.",
    who: "agents:write",
    errors: { 404: "for an unknown id or another company's department" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
