import { area } from "../../http/Area.ts"
import { MemoriesApi } from "./Api.ts"
import { MemoriesLive } from "./Http.ts"
import { MemoriesRepo } from "./MemoriesRepo.ts"

export const MemoriesArea = area({
  name: "memories",
  groups: [MemoriesApi],
  handlers: [MemoriesLive],
  repositories: [MemoriesRepo.layer]
})
