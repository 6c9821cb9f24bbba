import { area } from "../../http/Area.ts"
import { ListsApi } from "./Api.ts"
import { ListsLive } from "./Http.ts"
import { ListsRepo } from "./ListsRepo.ts"
import { Suppressions } from "./Suppressions.ts"

export const ListsArea = area({
  name: "lists",
  groups: [ListsApi],
  handlers: [ListsLive],
  repositories: [ListsRepo.layer, Suppressions.layer]
})
