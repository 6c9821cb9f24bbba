import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { Page, PageQuery } from "../platform/Pagination.ts"
import { IsoDate, NonBlankText, NonEmpty, Text } from "../platform/Schemas.ts"

/** A platform model id (or tier alias) as the model catalog names it. */
export const ModelId = NonBlankText(200)

export const AgentStatus = Schema.Literals(["active", "paused", "archived"])

export const Agent = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  /** Null: the platform's default model. */
  model: Schema.NullOr(Schema.String),
  status: AgentStatus,
  createdDate: IsoDate,
  updatedDate: IsoDate
}).annotate({ identifier: "Agent" })

/** The generic envelope plus `page` and `pageSize`, as the spec shows for agents. */
export const AgentPage = Schema.Struct({ ...Page(Agent).fields, page: Schema.Int, pageSize: Schema.Int })
  .annotate({ identifier: "AgentPage" })

const Description = Text(5_000)
const Instructions = Text(50_000)

export const NewAgent = Schema.Struct({
  name: NonEmpty,
  description: Schema.optional(Description),
  instructions: Schema.optional(Instructions),
  model: Schema.optional(ModelId)
})

export const AgentPatch = Schema.Struct({
  name: Schema.optional(NonEmpty),
  description: Schema.optional(Description),
  instructions: Schema.optional(Instructions),
  /** null goes back to the default model. */
  model: Schema.optional(Schema.NullOr(ModelId)),
  status: Schema.optional(AgentStatus)
})

export const Employee = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  role: Schema.String,
  instructions: Schema.String,
  model: Schema.NullOr(Schema.String),
  createdDate: IsoDate,
  updatedDate: IsoDate
}).annotate({ identifier: "Employee" })

export const NewEmployee = Schema.Struct({
  name: NonEmpty,
  role: NonEmpty,
  instructions: Schema.optional(Instructions),
  model: Schema.optional(ModelId)
})

const agentId = { agent_id: Schema.String }
const employeeId = { employee_id: Schema.String }

export class AgentsApi extends HttpApiGroup.make("agents")
  .annotateMerge(OpenApi.annotations({
    description: "AI agents of a company: instructions and the model they use.",
    override: { "x-displayName": "Agents" }
  })).add(
  HttpApiEndpoint.post("create", "/agents", {
    payload: NewAgent,
    success: Agent.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden]
  }).annotateMerge(OpenApi.annotations({
    summary: "Create an agent",
    description: "Creates an agent with instructions and an optional model of the catalog. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin, in a plan with the `agents` feature. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for another company."
  })),
  HttpApiEndpoint.get("list", "/agents", { query: PageQuery, success: AgentPage, error: [Forbidden] }).annotateMerge(OpenApi.annotations({
    summary: "List agents",
    description: "The company's agents, paginated. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `agents` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 naming the missing role or feature; 404 for an id of another company; 429 over the rate limit."
  })),
  HttpApiEndpoint.get("get", "/agents/:agent_id", { params: agentId, success: Agent, error: [Forbidden, NotFound] }).annotateMerge(OpenApi.annotations({
    summary: "Get an agent",
    description: "One agent of the caller's company. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `agents` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for an unknown id or another company's agent."
  })),
  HttpApiEndpoint.patch("update", "/agents/:agent_id", {
    params: agentId,
    payload: AgentPatch,
    success: Agent,
    error: [BadRequest, Forbidden, NotFound]
  }).annotateMerge(OpenApi.annotations({
    summary: "Change an agent",
    description: "Changes an agent's name, description, instructions, model or status. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin, in a plan with the `agents` feature. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for an unknown id or another company's agent."
  }))
).middleware(Authentication).prefix("/api/v0") {}

/** Employees: the AI personas scheduled tasks run as. */
export class EmployeesApi extends HttpApiGroup.make("employees")
  .annotateMerge(OpenApi.annotations({
    description: "AI employees of a company: a role, instructions and a model; scheduled tasks run as one.",
    override: { "x-displayName": "Employees" }
  })).add(
  HttpApiEndpoint.post("create", "/employees", {
    payload: NewEmployee,
    success: Employee.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden]
  }).annotateMerge(OpenApi.annotations({
    summary: "Create an employee",
    description: "Creates an AI employee with a role, instructions and an optional model; scheduled tasks run as an employee. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin, in a plan with the `agents` feature. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for another company."
  })),
  HttpApiEndpoint.get("list", "/employees", { query: PageQuery, success: Page(Employee), error: [Forbidden] }).annotateMerge(OpenApi.annotations({
    summary: "List employees",
    description: "The company's employees, paginated. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `agents` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 naming the missing role or feature; 404 for an id of another company; 429 over the rate limit."
  })),
  HttpApiEndpoint.get("get", "/employees/:employee_id", {
    params: employeeId,
    success: Employee,
    error: [Forbidden, NotFound]
  }).annotateMerge(OpenApi.annotations({
    summary: "Get an employee",
    description: "One employee of the caller's company. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role, in a plan with the `agents` feature. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403; 404 for an unknown id or another company's employee."
  }))
).middleware(Authentication).prefix("/api/v0") {}
