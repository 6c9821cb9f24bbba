import { HttpApiBuilder } from "effect/http-api"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { CampaignsApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Campaigns from "./Campaigns.ts"
import * as Recipients from "./Recipients.ts"
import * as Sending from "./Sending.ts"

const api = areaApi(CampaignsApi)

const read = authorizedAnswer("campaigns:read")
const write = authorizedAnswer("campaigns:write")

export const CampaignsLive = HttpApiBuilder.group(api, "campaigns", (handlers) =>
  handlers
    .handle("create", ({ payload }) => write(Campaigns.create(payload)))
    .handle("list", ({ query }) => read(Campaigns.list(pageRequest(query))))
    .handle("get", ({ params }) => read(Campaigns.get(params.campaignId)))
    .handle("update", ({ params, payload }) => write(Campaigns.update(params.campaignId, payload)))
    .handle("delete", ({ params }) => write(Campaigns.remove(params.campaignId)))
    .handle("send", ({ params, payload }) => write(Sending.send(params.campaignId, payload)))
    .handle("schedule", ({ params, payload }) => write(Sending.schedule(params.campaignId, payload)))
    .handle("pause", ({ params, payload }) => write(Sending.pause(params.campaignId, payload)))
    .handle("resume", ({ params, payload }) => write(Sending.resume(params.campaignId, payload)))
    .handle("cancel", ({ params, payload }) => write(Sending.cancel(params.campaignId, payload)))
    .handle("listVersions", ({ params, query }) => read(Campaigns.listVersions(params.campaignId, pageRequest(query))))
    .handle("getVersion", ({ params }) => read(Campaigns.getVersion(params.campaignId, params.version)))
    .handle("restoreVersion", ({ params, payload }) =>
      write(Campaigns.restoreVersion(params.campaignId, params.version, payload)))
    .handle("listRecipients", ({ params, query }) => read(Recipients.list(params.campaignId, query))))
