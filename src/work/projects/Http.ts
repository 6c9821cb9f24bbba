import { HttpApiBuilder } from "effect/http-api"
import { ProjectsApi } from "./Api.ts"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Projects from "./Projects.ts"

const api = areaApi(ProjectsApi)

export const ProjectsLive = HttpApiBuilder.group(api, "projects", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("projects:write")(Projects.create(payload))))
    .handle("list", ({ query }) => answer(authorize("projects:read")(Projects.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("projects:read")(Projects.get(params.project_id))))
    .handle("update", ({ params, payload }) => answer(authorize("projects:write")(Projects.update(params.project_id, payload))))
    .handle("delete", ({ params }) => answer(authorize("projects:write")(Projects.remove(params.project_id)))))
