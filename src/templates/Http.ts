import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import { authorize } from "../auth/Policy.ts"
import { pageRequest } from "../platform/Pagination.ts"
import * as Templates from "./Templates.ts"

export const TemplatesLive = HttpApiBuilder.group(Api, "templates", (handlers) =>
  handlers
    .handle("create", ({ payload }) => authorize("campaigns:write")(Templates.create(payload)))
    .handle("list", ({ query }) => authorize("campaigns:read")(Templates.list(pageRequest(query))))
    .handle("get", ({ params }) => authorize("campaigns:read")(Templates.get(params.templateId)))
    .handle("update", ({ params, payload }) => authorize("campaigns:write")(Templates.update(params.templateId, payload)))
    .handle("delete", ({ params }) => authorize("campaigns:write")(Templates.remove(params.templateId)))
    .handleRaw("upload", ({ params, request }) =>
      authorize("campaigns:write")(Templates.upload(params.templateId, request))))
