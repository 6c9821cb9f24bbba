import { area } from "../../http/Area.ts"
import { OrganizationsApi } from "./Api.ts"
import { OrganizationsLive } from "./Http.ts"
import { OrganizationsRepo } from "./OrganizationsRepo.ts"

export const OrganizationsArea = area({
  name: "organizations",
  groups: [OrganizationsApi],
  handlers: [OrganizationsLive],
  repositories: [OrganizationsRepo.layer]
})
