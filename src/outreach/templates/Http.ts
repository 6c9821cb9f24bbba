import { HttpApiBuilder } from "effect/http-api"
import { TemplatesApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Templates from "./Templates.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(TemplatesApi)

export const TemplatesLive = HttpApiBuilder.group(api, "templates", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("campaigns:write")(Templates.create(payload))))
    .handle("list", ({ query }) => answer(authorize("campaigns:read")(Templates.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("campaigns:read")(Templates.get(params.templateId))))
    .handle("update", ({ params, payload }) => answer(authorize("campaigns:write")(Templates.update(params.templateId, payload))))
    .handle("delete", ({ params }) => answer(authorize("campaigns:write")(Templates.remove(params.templateId))))
    .handleRaw("upload", ({ params, request }) =>
      answer(authorize("campaigns:write")(Templates.upload(params.templateId, request)))))
