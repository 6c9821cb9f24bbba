import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { DomainsApi } from "./Api.ts"
import * as Domains from "./Domains.ts"

const api = areaApi(DomainsApi)

const read = authorizedAnswer("campaigns:read")
const write = authorizedAnswer("campaigns:write")

export const DomainsLive = HttpApiBuilder.group(api, "domains", (handlers) =>
  handlers
    .handle("create", ({ payload }) => write(Domains.create(payload)))
    .handle("list", ({ query }) => read(Domains.list(pageRequest(query))))
    .handle("get", ({ params }) => read(Domains.get(params.domainId)))
    .handle("delete", ({ params }) => write(Domains.remove(params.domainId)))
    .handle("verify", ({ params, payload }) => write(Domains.verify(params.domainId, payload))))
