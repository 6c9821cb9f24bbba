import { HttpApiBuilder } from "effect/http-api"
import { ListsApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Lists from "./Lists.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(ListsApi)

export const ListsLive = HttpApiBuilder.group(api, "lists", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("campaigns:write")(Lists.create(payload))))
    .handle("list", ({ query }) => answer(authorize("campaigns:read")(Lists.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("campaigns:read")(Lists.get(params.listId))))
    .handle("delete", ({ params }) => answer(authorize("campaigns:write")(Lists.remove(params.listId))))
    .handle("appendRows", ({ params, payload }) => answer(authorize("campaigns:write")(Lists.appendRows(params.listId, payload))))
    .handle("listRows", ({ params, query }) =>
      answer(authorize("campaigns:read")(Lists.listRows(params.listId, pageRequest(query), query.search))))
    .handle("deleteRow", ({ params }) => answer(authorize("campaigns:write")(Lists.removeRow(params.listId, params.rowId))))
    .handleRaw("import", ({ params, request }) => answer(authorize("campaigns:write")(Lists.importCsv(params.listId, request))))
    .handle("listSuppressions", ({ query }) =>
      answer(authorize("campaigns:read")(Lists.listSuppressions(pageRequest(query), query.search))))
    .handle("addSuppression", ({ payload }) => answer(authorize("campaigns:write")(Lists.addSuppression(payload))))
    .handle("deleteSuppression", ({ params }) => answer(authorize("campaigns:write")(Lists.removeSuppression(params.email)))))
