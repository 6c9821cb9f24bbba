import { ScheduledTasksApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as Tasks from "./Tasks.ts"

const api = areaApi(ScheduledTasksApi)

const read = authorizedAnswer("tasks:read")
const write = authorizedAnswer("tasks:write")

export const ScheduledTasksLive = HttpApiBuilder.group(api, "scheduledTasks", (handlers) =>
  handlers
    .handle("create", ({ payload }) => write(Tasks.create(payload)))
    .handle("list", ({ query }) => read(Tasks.list(pageRequest(query))))
    .handle("get", ({ params }) => read(Tasks.get(params.task_id)))
    .handle("update", ({ params, payload }) => write(Tasks.update(params.task_id, payload)))
    .handle("delete", ({ params }) => write(Tasks.remove(params.task_id)))
    .handle("pause", ({ params, payload }) => write(Tasks.pause(params.task_id, payload)))
    .handle("resume", ({ params, payload }) => write(Tasks.resume(params.task_id, payload)))
    .handle("reset", ({ params, payload }) => write(Tasks.reset(params.task_id, payload)))
    .handle("run", ({ params, payload }) => write(Tasks.run(params.task_id, payload)))
    .handle("listExecutions", ({ params, query }) => read(Tasks.listExecutions(params.task_id, pageRequest(query))))
    .handle("addNote", ({ params, payload }) => write(Tasks.addNote(params.task_id, payload)))
    .handle("listNotes", ({ params, query }) => read(Tasks.listNotes(params.task_id, pageRequest(query)))))
