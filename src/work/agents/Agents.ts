import { Effect } from "effect"
import { Authorized } from "../../auth/Policy.ts"
import { requireKnownModel } from "../../models/llm/Llm.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import { type AgentRecord, AgentsRepo } from "./AgentsRepo.ts"
import { AgentNotFound, EmployeeNotFound } from "./Errors.ts"
import { requireDepartment } from "../departments/Departments.ts"
import type { Agent, AgentPatch, Employee, EmployeePatch, NewAgent, NewEmployee } from "./Api.ts"
import { type EmployeeRecord, EmployeesRepo } from "./EmployeesRepo.ts"

/** Agents and employees belong to the caller's company; everyone reads them, managers change them. */

export const toAgent = (record: AgentRecord): typeof Agent.Type => ({
  id: record.id,
  companyId: record.companyId,
  name: record.name,
  description: record.description,
  instructions: record.instructions,
  model: record.model,
  tools: record.tools,
  status: record.status,
  createdDate: record.createdAt,
  updatedDate: record.updatedAt
})

export const toEmployee = (record: EmployeeRecord): typeof Employee.Type => ({
  id: record.id,
  companyId: record.companyId,
  name: record.name,
  role: record.role,
  instructions: record.instructions,
  model: record.model,
  departmentId: record.departmentId,
  createdDate: record.createdAt,
  updatedDate: record.updatedAt
})

export const createAgent = Effect.fn("Agents.create")(function*(input: typeof NewAgent.Type) {
  const { principal } = yield* Authorized("agents:write")
  yield* requireKnownModel(input.model)
  const now = yield* currentDate
  const agent = yield* AgentsRepo.use((repo) =>
    repo.create({
      id: newId("agt"),
      companyId: principal.companyId,
      name: input.name,
      description: input.description ?? "",
      instructions: input.instructions ?? "",
      model: input.model ?? null,
      tools: input.tools ?? null,
      status: "active",
      createdAt: now,
      updatedAt: now
    })
  )
  return toAgent(agent)
})

export const listAgents = Effect.fn("Agents.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("agents:read")
  const { rows, total } = yield* AgentsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return { ...toPage(rows.map(toAgent), total, request), page: request.page, pageSize: request.pageSize }
})

export const getAgent = Effect.fn("Agents.get")(function*(id: string) {
  const { principal } = yield* Authorized("agents:read")
  return toAgent(yield* orRefuse(() => new AgentNotFound({ id }))(yield* AgentsRepo.use((repo) => repo.get(principal.companyId, id))))
})

export const updateAgent = Effect.fn("Agents.update")(function*(id: string, patch: typeof AgentPatch.Type) {
  const { principal } = yield* Authorized("agents:write")
  yield* requireKnownModel(patch.model)
  const now = yield* currentDate
  const updated = yield* AgentsRepo.use((repo) => repo.update(principal.companyId, id, patch, now))
  return toAgent(yield* orRefuse(() => new AgentNotFound({ id }))(updated))
})

export const createEmployee = Effect.fn("Employees.create")(function*(input: typeof NewEmployee.Type) {
  const { principal } = yield* Authorized("agents:write")
  yield* requireKnownModel(input.model)
  yield* requireDepartment(principal.companyId, input.departmentId)
  const now = yield* currentDate
  const employee = yield* EmployeesRepo.use((repo) =>
    repo.create({
      id: newId("emp"),
      companyId: principal.companyId,
      name: input.name,
      role: input.role,
      instructions: input.instructions ?? "",
      model: input.model ?? null,
      departmentId: input.departmentId ?? null,
      createdAt: now,
      updatedAt: now
    })
  )
  return toEmployee(employee)
})

export const listEmployees = Effect.fn("Employees.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("agents:read")
  const { rows, total } = yield* EmployeesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toEmployee), total, request)
})

export const getEmployee = Effect.fn("Employees.get")(function*(id: string) {
  const { principal } = yield* Authorized("agents:read")
  const found = yield* EmployeesRepo.use((repo) => repo.get(principal.companyId, id))
  return toEmployee(yield* orRefuse(() => new EmployeeNotFound({ id }))(found))
})

export const updateEmployee = Effect.fn("Employees.update")(function*(id: string, patch: typeof EmployeePatch.Type) {
  const { principal } = yield* Authorized("agents:write")
  yield* requireKnownModel(patch.model)
  yield* requireDepartment(principal.companyId, patch.departmentId)
  const now = yield* currentDate
  const updated = yield* EmployeesRepo.use((repo) => repo.update(principal.companyId, id, patch, now))
  return toEmployee(yield* orRefuse(() => new EmployeeNotFound({ id }))(updated))
})
