import { area } from "../../http/Area.ts"
import { Credits } from "./Credits.ts"
import { CreditsRepo } from "./CreditsRepo.ts"
import { UsageRepo } from "./UsageRepo.ts"

export const UsageArea = area({
  name: "usage",
  repositories: [UsageRepo.layer, CreditsRepo.layer],
  workers: [Credits.worker]
})
