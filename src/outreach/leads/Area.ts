import { area } from "../../http/Area.ts"
import { LeadsApi } from "./Api.ts"
import { LeadsLive, SmartListsLive } from "./Http.ts"
import { Leads } from "./Leads.ts"
import { LeadsRepo } from "./LeadsRepo.ts"
import { SmartListsApi } from "./SmartListsApi.ts"
import { SmartListsRepo } from "./SmartListsRepo.ts"

export const LeadsArea = area({
  name: "leads",
  groups: [LeadsApi, SmartListsApi],
  handlers: [LeadsLive, SmartListsLive],
  repositories: [LeadsRepo.layer, Leads.live, SmartListsRepo.layer]
})
