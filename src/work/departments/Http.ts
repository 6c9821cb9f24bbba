import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { DepartmentsApi } from "./Api.ts"
import * as Departments from "./Departments.ts"

const api = areaApi(DepartmentsApi)

export const DepartmentsLive = HttpApiBuilder.group(api, "departments", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("agents:write")(Departments.create(payload))))
    .handle("list", ({ query }) => answer(authorize("agents:read")(Departments.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("agents:read")(Departments.get(params.departmentId))))
    .handle("update", ({ params, payload }) => answer(authorize("agents:write")(Departments.update(params.departmentId, payload))))
    .handle("delete", ({ params }) => answer(authorize("agents:write")(Departments.remove(params.departmentId)))))
