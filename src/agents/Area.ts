import { area } from "../http/Area.ts"
import { AgentsApi, EmployeesApi } from "./Api.ts"
import { AgentsLive, EmployeesLive } from "./Http.ts"
import { AgentsRepo } from "./AgentsRepo.ts"
import { EmployeesRepo } from "./EmployeesRepo.ts"

export const AgentsArea = area({
  name: "agents",
  groups: [AgentsApi, EmployeesApi],
  handlers: [AgentsLive, EmployeesLive],
  repositories: [AgentsRepo.layer, EmployeesRepo.layer]
})
