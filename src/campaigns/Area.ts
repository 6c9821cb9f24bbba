import { area } from "../http/Area.ts"
import { CampaignsApi } from "./Api.ts"
import { CampaignWorkerLive } from "./CampaignWorker.ts"
import { CampaignsRepo } from "./CampaignsRepo.ts"
import { CampaignsLive } from "./Http.ts"
import { RecipientsRepo } from "./RecipientsRepo.ts"
import { TrackingApi } from "./TrackingApi.ts"
import { TrackingLive } from "./TrackingHttp.ts"
import { InstallationSecrets } from "./TrackingSecret.ts"

export const CampaignsArea = area({
  name: "campaigns",
  groups: [CampaignsApi, TrackingApi],
  handlers: [CampaignsLive, TrackingLive],
  repositories: [CampaignsRepo.layer, RecipientsRepo.layer, InstallationSecrets.layer],
  workers: [CampaignWorkerLive]
})
