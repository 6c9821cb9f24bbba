import { area } from "../http/Area.ts"
import { ScheduledTasksApi } from "./Api.ts"
import { ScheduledTasksLive } from "./Http.ts"
import { SchedulerLive } from "./Scheduler.ts"
import { tasksRepoSql } from "./TasksRepoSql.ts"

export const TasksArea = area({
  name: "tasks",
  groups: [ScheduledTasksApi],
  handlers: [ScheduledTasksLive],
  repositories: [tasksRepoSql],
  workers: [SchedulerLive]
})
