import { area } from "../../http/Area.ts"
import { ScheduledTasksApi } from "./Api.ts"
import { ScheduledTasksLive } from "./Http.ts"
import { SchedulerLive } from "./Scheduler.ts"
import { TasksRepo } from "./TasksRepo.ts"

export const TasksArea = area({
  name: "tasks",
  groups: [ScheduledTasksApi],
  handlers: [ScheduledTasksLive],
  repositories: [TasksRepo.layer],
  workers: [SchedulerLive]
})
