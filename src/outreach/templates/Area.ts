import { area } from "../../http/Area.ts"
import { TemplatesApi } from "./Api.ts"
import { TemplatesLive } from "./Http.ts"
import { TemplatesRepo } from "./TemplatesRepo.ts"

export const TemplatesArea = area({
  name: "templates",
  groups: [TemplatesApi],
  handlers: [TemplatesLive],
  repositories: [TemplatesRepo.layer]
})
