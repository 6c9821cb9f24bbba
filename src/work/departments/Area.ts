import { area } from "../../http/Area.ts"
import { DepartmentsApi } from "./Api.ts"
import { DepartmentsLive } from "./Http.ts"
import { DepartmentsRepo } from "./DepartmentsRepo.ts"

export const DepartmentsArea = area({
  name: "departments",
  groups: [DepartmentsApi],
  handlers: [DepartmentsLive],
  repositories: [DepartmentsRepo.layer]
})
