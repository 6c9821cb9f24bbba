import { area } from "../../http/Area.ts"
import { ProjectsApi } from "./Api.ts"
import { ProjectsLive } from "./Http.ts"
import { ProjectsRepo } from "./ProjectsRepo.ts"

export const ProjectsArea = area({
  name: "projects",
  groups: [ProjectsApi],
  handlers: [ProjectsLive],
  repositories: [ProjectsRepo.layer]
})
