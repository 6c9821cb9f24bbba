import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../auth/Policy.ts"
import { Api } from "../app/Api.ts"
import { pageRequest } from "../platform/Pagination.ts"
import * as Agents from "./Agents.ts"
import { answer } from "../http/Refusals.ts"

export const AgentsLive = HttpApiBuilder.group(Api, "agents", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("agents:write")(Agents.createAgent(payload))))
    .handle("list", ({ query }) => answer(authorize("agents:read")(Agents.listAgents(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("agents:read")(Agents.getAgent(params.agent_id))))
    .handle("update", ({ params, payload }) => answer(authorize("agents:write")(Agents.updateAgent(params.agent_id, payload)))))

export const EmployeesLive = HttpApiBuilder.group(Api, "employees", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("agents:write")(Agents.createEmployee(payload))))
    .handle("list", ({ query }) => answer(authorize("agents:read")(Agents.listEmployees(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("agents:read")(Agents.getEmployee(params.employee_id)))))
