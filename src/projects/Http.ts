import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../auth/Policy.ts"
import { Api } from "../app/Api.ts"
import { pageRequest } from "../platform/Pagination.ts"
import * as Projects from "./Projects.ts"

export const ProjectsLive = HttpApiBuilder.group(Api, "projects", (handlers) =>
  handlers
    .handle("create", ({ payload }) => authorize("projects:write")(Projects.create(payload)))
    .handle("list", ({ query }) => authorize("projects:read")(Projects.list(pageRequest(query))))
    .handle("get", ({ params }) => authorize("projects:read")(Projects.get(params.project_id)))
    .handle("update", ({ params, payload }) => authorize("projects:write")(Projects.update(params.project_id, payload)))
    .handle("delete", ({ params }) => authorize("projects:write")(Projects.remove(params.project_id))))
