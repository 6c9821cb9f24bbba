import { area } from "../../http/Area.ts"
import { CampaignsApi } from "./Api.ts"
import { CampaignWorkerLive } from "./CampaignWorker.ts"
import { CampaignsRepo } from "./CampaignsRepo.ts"
import { CampaignsLive } from "./Http.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"

export const CampaignsArea = area({
  name: "campaigns",
  groups: [CampaignsApi],
  handlers: [CampaignsLive],
  repositories: [CampaignsRepo.layer, RecipientsRepo.layer],
  workers: [CampaignWorkerLive]
})
