import { area } from "../../http/Area.ts"
import { BrandKitApi } from "./Api.ts"
import { BrandKitRepo } from "./BrandKitRepo.ts"
import { BrandKitLive } from "./Http.ts"

export const BrandArea = area({
  name: "brand",
  groups: [BrandKitApi],
  handlers: [BrandKitLive],
  repositories: [BrandKitRepo.layer]
})
