import { area } from "../../http/Area.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { DomainsApi } from "./Api.ts"
import { DomainsRepo } from "./DomainsRepo.ts"
import { DomainsLive } from "./Http.ts"

export const DomainsArea = area({
  name: "domains",
  groups: [DomainsApi],
  handlers: [DomainsLive],
  repositories: [DomainsRepo.layer, SecretBox.layer]
})
