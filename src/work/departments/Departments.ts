import { Effect, Option } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Department, DepartmentPatch, NewDepartment } from "./Api.ts"
import { type DepartmentRecord, DepartmentsRepo } from "./DepartmentsRepo.ts"
import { DepartmentNotFound, UnknownDepartment } from "./Errors.ts"

/**
 * Departments group a company's employees; a department's instructions join
 * the prompt of each of its employees (`departmentPrompt`). Everyone reads
 * them, managers change them, as agents and employees (docs/agents.md).
 */

export const toDepartment = (record: DepartmentRecord): typeof Department.Type => ({
  id: record.id,
  companyId: record.companyId,
  name: record.name,
  description: record.description,
  instructions: record.instructions,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

const find = (companyId: string, id: string) =>
  Effect.flatMap(DepartmentsRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => new DepartmentNotFound({ id })))

export const create = Effect.fn("Departments.create")(function*(input: typeof NewDepartment.Type) {
  yield* Authorized("agents:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const created = yield* DepartmentsRepo.use((repo) =>
    repo.create({
      id: newId("dep"),
      companyId: principal.companyId,
      name: input.name,
      description: input.description ?? "",
      instructions: input.instructions ?? "",
      createdAt: now,
      updatedAt: now
    })
  )
  return toDepartment(created)
})

export const list = Effect.fn("Departments.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("agents:read")
  const { rows, total } = yield* DepartmentsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toDepartment), total, request)
})

export const get = Effect.fn("Departments.get")(function*(id: string) {
  const { principal } = yield* Authorized("agents:read")
  return toDepartment(yield* find(principal.companyId, id))
})

export const update = Effect.fn("Departments.update")(function*(id: string, patch: typeof DepartmentPatch.Type) {
  yield* Authorized("agents:write")
  const principal = yield* requireCompany(patch.companyId)
  const { companyId: _, ...change } = patch
  const now = yield* currentDate
  const updated = yield* DepartmentsRepo.use((repo) => repo.update(principal.companyId, id, change, now))
  return toDepartment(yield* orRefuse(() => new DepartmentNotFound({ id }))(updated))
})

export const remove = Effect.fn("Departments.remove")(function*(id: string) {
  const { principal } = yield* Authorized("agents:write")
  const removed = yield* DepartmentsRepo.use((repo) => repo.remove(principal.companyId, id))
  return toDepartment(yield* orRefuse(() => new DepartmentNotFound({ id }))(removed))
})

/**
 * Checks a `departmentId` a body names (null and absent pass): a department
 * of `companyId`, else 400 naming the field — as other areas treat ids in
 * bodies (a scheduled task's `employeeId`).
 */
export const requireDepartment = (companyId: string, id: string | null | undefined) =>
  id === null || id === undefined
    ? Effect.void
    : Effect.flatMap(DepartmentsRepo.use((repo) => repo.get(companyId, id)), (found) =>
      Option.isSome(found) ? Effect.void : Effect.fail(new UnknownDepartment({ id })))

/**
 * The part of an employee's system prompt its department brings: the
 * department's name, description and instructions, or "" when the employee
 * has no department (or it has been deleted meanwhile). For prompt builders
 * (employee chat, scheduled tasks): `yield* departmentPrompt(employee)`.
 */
export const departmentPrompt = (employee: { readonly companyId: string; readonly departmentId: string | null }) =>
  employee.departmentId === null
    ? Effect.succeed("")
    : Effect.map(DepartmentsRepo.use((repo) => repo.get(employee.companyId, employee.departmentId!)), (found) =>
      Option.match(found, {
        onNone: () => "",
        onSome: (department) =>
          [
            `You work in the ${department.name} department.`,
            department.description === "" ? "" : `About the department: ${department.description}`,
            department.instructions === "" ? "" : `The department's instructions:\n${department.instructions}`
          ].filter((line) => line !== "").join("\n")
      }))
