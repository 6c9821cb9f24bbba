import { area } from "../../http/Area.ts"
import { WebApi } from "./Api.ts"
import { WebLive } from "./Http.ts"

export const JobsArea = area({
  name: "jobs",
  groups: [WebApi],
  handlers: [WebLive]
})
