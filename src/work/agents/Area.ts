import { area } from "../../http/Area.ts"
import { AgentsApi, EmployeesApi } from "./Api.ts"
import { AgentsLive, EmployeesLive } from "./Http.ts"
import { AgentsRepo } from "./AgentsRepo.ts"
import { EmployeesRepo } from "./EmployeesRepo.ts"
import { AgentChatApi } from "./ChatApi.ts"
import { AgentChatLive } from "./ChatHttp.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"

export const AgentsArea = area({
  name: "agents",
  groups: [AgentsApi, EmployeesApi, AgentChatApi],
  handlers: [AgentsLive, EmployeesLive, AgentChatLive],
  repositories: [AgentsRepo.layer, EmployeesRepo.layer, ThreadsRepo.layer]
})
