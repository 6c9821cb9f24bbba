import { area } from "../http/Area.ts"
import { LeadsApi } from "./Api.ts"
import { LeadsLive } from "./Http.ts"
import { Leads } from "./Leads.ts"
import { LeadsRepo } from "./LeadsRepo.ts"

export const LeadsArea = area({
  name: "leads",
  groups: [LeadsApi],
  handlers: [LeadsLive],
  repositories: [LeadsRepo.layer, Leads.live]
})
