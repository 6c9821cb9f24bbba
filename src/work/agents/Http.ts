import { HttpApiBuilder } from "effect/http-api"
import { AgentsApi, EmployeesApi } from "./Api.ts"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Agents from "./Agents.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(AgentsApi, EmployeesApi)

export const AgentsLive = HttpApiBuilder.group(api, "agents", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("agents:write")(Agents.createAgent(payload))))
    .handle("list", ({ query }) => answer(authorize("agents:read")(Agents.listAgents(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("agents:read")(Agents.getAgent(params.agent_id))))
    .handle("update", ({ params, payload }) => answer(authorize("agents:write")(Agents.updateAgent(params.agent_id, payload)))))

export const EmployeesLive = HttpApiBuilder.group(api, "employees", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("agents:write")(Agents.createEmployee(payload))))
    .handle("list", ({ query }) => answer(authorize("agents:read")(Agents.listEmployees(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("agents:read")(Agents.getEmployee(params.employee_id))))
    .handle("update", ({ params, payload }) =>
      answer(authorize("agents:write")(Agents.updateEmployee(params.employee_id, payload)))))
