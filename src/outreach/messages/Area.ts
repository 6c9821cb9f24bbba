import { area } from "../../http/Area.ts"
import { TrackingApi } from "./TrackingApi.ts"
import { TrackingLive } from "./TrackingHttp.ts"
import { InstallationSecrets } from "../../platform/Secrets.ts"

export const OutreachArea = area({
  name: "outreach",
  groups: [TrackingApi],
  handlers: [TrackingLive],
  repositories: [InstallationSecrets.layer]
})
