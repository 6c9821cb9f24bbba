import { area } from "../../http/Area.ts"
import { HealthApi } from "./Api.ts"
import { HealthLive } from "./Http.ts"

export const HealthArea = area({
  name: "health",
  groups: [HealthApi],
  handlers: [HealthLive]
})
