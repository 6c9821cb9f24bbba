import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { LeadsApi } from "./Api.ts"
import { importCsv } from "./LeadImport.ts"
import * as Leads from "./Leads.ts"
import * as SmartLists from "./SmartLists.ts"
import { SmartListsApi } from "./SmartListsApi.ts"

const api = areaApi(LeadsApi, SmartListsApi)

export const LeadsLive = HttpApiBuilder.group(api, "leads", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("campaigns:write")(Leads.create(payload))))
    .handle("list", ({ query }) =>
      answer(authorize("campaigns:read")(Leads.list(pageRequest(query), { search: query.search, status: query.status, tag: query.tag }))))
    .handleRaw("import", ({ request }) => answer(authorize("campaigns:write")(importCsv(request))))
    .handle("get", ({ params }) => answer(authorize("campaigns:read")(Leads.get(params.leadId))))
    .handle("update", ({ params, payload }) => answer(authorize("campaigns:write")(Leads.update(params.leadId, payload))))
    .handle("delete", ({ params }) => answer(authorize("campaigns:write")(Leads.remove(params.leadId))))
    .handle("activities", ({ params, query }) =>
      answer(authorize("campaigns:read")(Leads.activities(params.leadId, pageRequest(query))))))

export const SmartListsLive = HttpApiBuilder.group(api, "smartLists", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("campaigns:write")(SmartLists.create(payload))))
    .handle("list", ({ query }) => answer(authorize("campaigns:read")(SmartLists.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("campaigns:read")(SmartLists.get(params.smartListId))))
    .handle("update", ({ params, payload }) => answer(authorize("campaigns:write")(SmartLists.update(params.smartListId, payload))))
    .handle("delete", ({ params }) => answer(authorize("campaigns:write")(SmartLists.remove(params.smartListId))))
    .handle("leads", ({ params, query }) =>
      answer(authorize("campaigns:read")(SmartLists.leads(params.smartListId, pageRequest(query))))))
