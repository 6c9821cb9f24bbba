import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { IsoDate, NonBlankText, NonEmpty, Text } from "../../platform/Schemas.ts"
import { AgentToolList } from "./ToolNames.ts"

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
  /** The tools it may use in conversations; null: all of them. */
  tools: Schema.NullOr(AgentToolList),
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
  model: Schema.optional(ModelId),
  /** The tools it may use in conversations (default: all). */
  tools: Schema.optional(AgentToolList)
})

export const AgentPatch = Schema.Struct({
  name: Schema.optional(NonEmpty),
  description: Schema.optional(Description),
  instructions: Schema.optional(Instructions),
  /** null goes back to the default model. */
  model: Schema.optional(Schema.NullOr(ModelId)),
  /** null goes back to every tool. */
  tools: Schema.optional(Schema.NullOr(AgentToolList)),
  status: Schema.optional(AgentStatus)
})

export const Employee = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  role: Schema.String,
  instructions: Schema.String,
  model: Schema.NullOr(Schema.String),
  /** The department whose instructions join the employee's prompt; null: none. */
  departmentId: Schema.NullOr(Schema.String),
  createdDate: IsoDate,
  updatedDate: IsoDate
}).annotate({ identifier: "Employee" })

export const NewEmployee = Schema.Struct({
  name: NonEmpty,
  role: NonEmpty,
  instructions: Schema.optional(Instructions),
  model: Schema.optional(ModelId),
  departmentId: Schema.optional(Schema.String)
})

export const EmployeePatch = Schema.Struct({
  name: Schema.optional(NonEmpty),
  role: Schema.optional(NonEmpty),
  instructions: Schema.optional(Instructions),
  /** null goes back to the default model. */
  model: Schema.optional(Schema.NullOr(ModelId)),
  /** null takes the employee out of its department. */
  departmentId: Schema.optional(Schema.NullOr(Schema.String))
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
  }).pipe(described({
    summary: "Create an agent",
    does: "Creates an agent with instructions, an optional model of the catalog and the tools it may use in conversations (default all).",
    who: "agents:write",
    errors: { 404: "for another company" }
  })),
  HttpApiEndpoint.get("list", "/agents", { query: PageQuery, success: AgentPage, error: [Forbidden] }).pipe(described({
    summary: "List agents",
    does: "The company's agents, paginated.",
    who: "agents:read"
  })),
  HttpApiEndpoint.get("get", "/agents/:agent_id", { params: agentId, success: Agent, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Get an agent",
    does: "One agent of the caller's company.",
    who: "agents:read",
    errors: { 404: "for an unknown id or another company's agent" }
  })),
  HttpApiEndpoint.patch("update", "/agents/:agent_id", {
    params: agentId,
    payload: AgentPatch,
    success: Agent,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change an agent",
    does: "Changes an agent's name, description, instructions, model, tools or status.",
    who: "agents:write",
    errors: { 404: "for an unknown id or another company's agent" }
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
  }).pipe(described({
    summary: "Create an employee",
    does: "Creates an AI employee with a role, instructions, an optional model and an optional department (whose instructions join its prompt); scheduled tasks run as an employee.",
    who: "agents:write",
    errors: { 400: "a departmentId that is not a department of the company", 404: "for another company" }
  })),
  HttpApiEndpoint.get("list", "/employees", { query: PageQuery, success: Page(Employee), error: [Forbidden] }).pipe(described({
    summary: "List employees",
    does: "The company's employees, paginated.",
    who: "agents:read"
  })),
  HttpApiEndpoint.get("get", "/employees/:employee_id", {
    params: employeeId,
    success: Employee,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get an employee",
    does: "One employee of the caller's company.",
    who: "agents:read",
    errors: { 404: "for an unknown id or another company's employee" }
  })),
  HttpApiEndpoint.patch("update", "/employees/:employee_id", {
    params: employeeId,
    payload: EmployeePatch,
    success: Employee,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change an employee",
    does: "Changes an employee's name, role, instructions, model or department (null: none).",
    who: "agents:write",
    errors: {
      400: "a departmentId that is not a department of the company",
      404: "for an unknown id or another company's employee"
    }
  }))
).middleware(Authentication).prefix("/api/v0") {}
