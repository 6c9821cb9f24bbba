import { Effect, Option } from "effect"
import { EmployeesRepo } from "../agents/EmployeesRepo.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized, ownsOrManages } from "../../auth/Policy.ts"
import type { Principal } from "../../auth/Principal.ts"
import { requireKnownModel } from "../../models/llm/Llm.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type {
  NewScheduledTask,
  NewTaskNote,
  ScheduledTask,
  ScheduledTaskPatch,
  TaskActionBody,
  TaskExecution,
  TaskNote
} from "./Api.ts"
import { InvalidTask, TaskNotChangeable, TaskNotFound } from "./Errors.ts"
import { firstRun, type ScheduleSpec } from "./Occurrences.ts"
import { type ExecutionView, newExecution, type NoteRecord, type TaskChange, type TaskRecord } from "./TaskRecords.ts"
import { TasksRepo } from "./TasksRepo.ts"

/**
 * Scheduled tasks as the API manages them. Everyone in the company reads
 * them; their owner, and company owners and admins, change them. Runs happen
 * in the scheduler (`Scheduler.ts`): `run` only queues one.
 */

export const toScheduledTask = (task: TaskRecord): typeof ScheduledTask.Type => ({
  id: task.id,
  companyId: task.companyId,
  userId: task.userId,
  employeeId: task.employeeId,
  name: task.name,
  prompt: task.prompt,
  scheduleType: task.scheduleType,
  scheduledAt: task.scheduledAt,
  recurringConfig: task.recurringConfig,
  contextSettings: task.contextSettings,
  timezone: task.timezone,
  nextRunAt: task.nextRunAt,
  lastRunAt: task.lastRunAt,
  status: task.status,
  runCount: task.runCount,
  dailyCreditLimit: task.dailyCreditLimit,
  templateId: task.templateId,
  templateVersion: task.templateVersion,
  createdDate: task.createdAt,
  updatedDate: task.updatedAt
})

export const toTaskExecution = (execution: ExecutionView): typeof TaskExecution.Type => ({
  id: execution.id,
  taskId: execution.taskId,
  trigger: execution.trigger,
  status: execution.status,
  scheduledFor: execution.scheduledFor,
  attempts: execution.attempts,
  model: execution.model,
  output: execution.output,
  error: execution.error,
  inputTokens: execution.inputTokens,
  outputTokens: execution.outputTokens,
  credits: execution.credits,
  startedAt: execution.startedAt,
  finishedAt: execution.finishedAt,
  durationMs: execution.startedAt !== null && execution.finishedAt !== null
    ? execution.finishedAt.getTime() - execution.startedAt.getTime()
    : null,
  evaluation: execution.evaluation === null ? null : {
    passed: execution.evaluation.passed,
    score: execution.evaluation.score,
    checks: execution.evaluation.checks,
    createdDate: execution.evaluation.createdAt
  },
  createdDate: execution.createdAt
})

export const toTaskNote = (note: NoteRecord): typeof TaskNote.Type => ({
  id: note.id,
  taskId: note.taskId,
  kind: note.kind,
  content: note.content,
  executionId: note.executionId,
  processedAt: note.processedAt,
  createdDate: note.createdAt
})

/** How far in the past a one-time `scheduledAt` may lie (clock skew between client and server). */
const pastTolerance = 60_000

const notFound = (id: string) => new TaskNotFound({ id })
const badRequest = (message: string) => new InvalidTask({ message })

const findTask = (principal: Principal, id: string) =>
  Effect.flatMap(
    TasksRepo.use((repo) => repo.get(principal.companyId, id)),
    Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed })
  )

/** The task if the caller may change it: in their company (else 404), owned or managed (else 403). */
const findChangeable = (principal: Principal, id: string) =>
  Effect.flatMap(findTask(principal, id), (task) =>
    ownsOrManages(principal, task.userId)
      ? Effect.succeed(task)
      : Effect.fail(new TaskNotChangeable({ id })))

const requireEmployee = (companyId: string, employeeId: string) =>
  Effect.flatMap(EmployeesRepo.use((repo) => repo.get(companyId, employeeId)), (employee) =>
    Option.isSome(employee)
      ? Effect.void
      : Effect.fail(badRequest(`employeeId: no employee ${employeeId} in this company`)))

/** Checks that the schedule fields fit the schedule type and answers the first run. */
const scheduleFirstRun = (spec: ScheduleSpec, now: Date): Effect.Effect<Date | null, InvalidTask> => {
  const config = spec.recurringConfig
  if (spec.scheduleType === "one_time") {
    if (spec.scheduledAt === null) return Effect.fail(badRequest("scheduledAt is required for one_time tasks"))
    if (config !== null) return Effect.fail(badRequest("recurringConfig applies only to recurring and heartbeat tasks"))
    if (spec.scheduledAt.getTime() < now.getTime() - pastTolerance) {
      return Effect.fail(badRequest("scheduledAt must not be in the past"))
    }
    return Effect.succeed(spec.scheduledAt)
  }
  if (spec.scheduledAt !== null) return Effect.fail(badRequest("scheduledAt applies only to one_time tasks"))
  if (config === null) {
    return Effect.fail(badRequest(`recurringConfig is required for ${spec.scheduleType} tasks`))
  }
  if (spec.scheduleType === "heartbeat" && config.intervalMinutes === undefined) {
    return Effect.fail(badRequest("recurringConfig of a heartbeat task takes intervalMinutes, not cron"))
  }
  const first = firstRun(spec, now)
  return first === null ? Effect.fail(badRequest("recurringConfig.cron never matches a date")) : Effect.succeed(first)
}

export const create = Effect.fn("Tasks.create")(function*(input: typeof NewScheduledTask.Type) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(input.companyId)
  yield* requireEmployee(principal.companyId, input.employeeId)
  yield* requireKnownModel(input.contextSettings?.model)
  const now = yield* currentDate
  const spec: ScheduleSpec = {
    scheduleType: input.scheduleType,
    scheduledAt: input.scheduledAt ?? null,
    recurringConfig: input.recurringConfig ?? null,
    timezone: input.timezone ?? "UTC"
  }
  const nextRunAt = yield* scheduleFirstRun(spec, now)
  const task = yield* TasksRepo.use((repo) =>
    repo.create({
      ...spec,
      id: newId("tsk"),
      companyId: principal.companyId,
      organizationId: principal.organizationId,
      userId: principal.userId,
      employeeId: input.employeeId,
      name: input.name,
      prompt: input.prompt,
      contextSettings: input.contextSettings ?? {},
      nextRunAt,
      lastRunAt: null,
      status: "active",
      runCount: 0,
      dailyCreditLimit: input.dailyCreditLimit ?? null,
      templateId: null,
      templateVersion: null,
      pendingExecutionId: null,
      createdAt: now,
      updatedAt: now
    })
  )
  return toScheduledTask(task)
})

export const list = Effect.fn("Tasks.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("tasks:read")
  const { rows, total } = yield* TasksRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toScheduledTask), total, request)
})

export const get = Effect.fn("Tasks.get")(function*(id: string) {
  const { principal } = yield* Authorized("tasks:read")
  return toScheduledTask(yield* findTask(principal, id))
})

const change = (principal: Principal, id: string, taskChange: TaskChange) =>
  Effect.gen(function*() {
    const now = yield* currentDate
    const updated = yield* TasksRepo.use((repo) => repo.update(principal.companyId, id, taskChange, now))
    return yield* Option.match(updated, {
      onNone: () => Effect.fail(notFound(id)),
      onSome: (task) => Effect.succeed(toScheduledTask(task))
    })
  })

/**
 * Changes the supplied fields. A new schedule (type, time, recurrence or
 * zone) recomputes `nextRunAt`, and brings a completed task back to active;
 * fields that do not fit a new schedule type are dropped.
 */
export const update = Effect.fn("Tasks.update")(function*(id: string, patch: typeof ScheduledTaskPatch.Type) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(patch.companyId)
  const task = yield* findChangeable(principal, id)
  if (patch.employeeId !== undefined) yield* requireEmployee(principal.companyId, patch.employeeId)
  yield* requireKnownModel(patch.contextSettings?.model)
  const settings: TaskChange = {
    name: patch.name,
    prompt: patch.prompt,
    employeeId: patch.employeeId,
    contextSettings: patch.contextSettings,
    dailyCreditLimit: patch.dailyCreditLimit
  }
  const rescheduled = [patch.scheduleType, patch.scheduledAt, patch.recurringConfig, patch.timezone]
    .some((value) => value !== undefined)
  if (!rescheduled) return yield* change(principal, id, settings)
  const scheduleType = patch.scheduleType ?? task.scheduleType
  const oneTime = scheduleType === "one_time"
  const spec: ScheduleSpec = {
    scheduleType,
    scheduledAt: patch.scheduledAt !== undefined ? patch.scheduledAt : oneTime ? task.scheduledAt : null,
    recurringConfig: patch.recurringConfig !== undefined ? patch.recurringConfig : oneTime ? null : task.recurringConfig,
    timezone: patch.timezone ?? task.timezone
  }
  const nextRunAt = yield* scheduleFirstRun(spec, yield* currentDate)
  const status = task.status === "paused" ? "paused" : "active"
  return yield* change(principal, id, { ...settings, ...spec, status, nextRunAt: status === "active" ? nextRunAt : null })
})

export const remove = Effect.fn("Tasks.remove")(function*(id: string) {
  const { principal } = yield* Authorized("tasks:write")
  const task = yield* findChangeable(principal, id)
  const now = yield* currentDate
  yield* TasksRepo.use((repo) => repo.remove(principal.companyId, id, now))
  return toScheduledTask(task)
})

const completedError = (id: string) =>
  badRequest(`Scheduled task ${id} is completed; give it a new schedule with PATCH to run it again`)

/** Stops scheduled runs: `nextRunAt` becomes null until the task is resumed. */
export const pause = Effect.fn("Tasks.pause")(function*(id: string, body: typeof TaskActionBody.Type | null) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(body?.companyId)
  const task = yield* findChangeable(principal, id)
  if (task.status === "completed") return yield* completedError(id)
  if (task.status === "paused") return toScheduledTask(task)
  return yield* change(principal, id, { status: "paused", nextRunAt: null })
})

/** Schedules runs again from now; occurrences missed while paused do not run (a one-time task past due runs once). */
export const resume = Effect.fn("Tasks.resume")(function*(id: string, body: typeof TaskActionBody.Type | null) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(body?.companyId)
  const task = yield* findChangeable(principal, id)
  if (task.status === "completed") return yield* completedError(id)
  if (task.status === "active") return toScheduledTask(task)
  return yield* change(principal, id, { status: "active", nextRunAt: firstRun(task, yield* currentDate) })
})

/** Queues one run now, whatever the task's status; a run already queued is answered instead of a second. */
export const run = Effect.fn("Tasks.run")(function*(id: string, body: typeof TaskActionBody.Type | null) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(body?.companyId)
  yield* findChangeable(principal, id)
  const now = yield* currentDate
  const queued = yield* TasksRepo.use((repo) =>
    repo.requestRun(
      principal.companyId,
      id,
      newExecution({
        id: newId("exe"),
        taskId: id,
        trigger: "manual",
        status: "queued",
        scheduledFor: now,
        attempts: 0,
        startedAt: null,
        createdAt: now
      })
    )
  )
  return yield* Option.match(queued, {
    onNone: () => Effect.fail(notFound(id)),
    onSome: (execution) => Effect.succeed(toTaskExecution({ ...execution, evaluation: null }))
  })
})

/**
 * The spec's reset: history soft-deleted, run counters zero, settings and
 * status unchanged. Refused while a run is in progress, so that the run
 * cannot be recorded into the history just cleared.
 */
export const reset = Effect.fn("Tasks.reset")(function*(id: string, body: typeof TaskActionBody.Type | null) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(body?.companyId)
  yield* findChangeable(principal, id)
  const now = yield* currentDate
  const repo = yield* TasksRepo
  if (yield* repo.isLeased(id, now)) {
    return yield* badRequest(`Scheduled task ${id} is running; reset it when the run has finished`)
  }
  return yield* Option.match(yield* repo.reset(principal.companyId, id, now), {
    onNone: () => Effect.fail(notFound(id)),
    onSome: (task) => Effect.succeed(toScheduledTask(task))
  })
})

export const listExecutions = Effect.fn("Tasks.listExecutions")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("tasks:read")
  yield* findTask(principal, id)
  const { rows, total } = yield* TasksRepo.use((repo) => repo.listExecutions(id, windowOf(request)))
  return toPage(rows.map(toTaskExecution), total, request)
})

/** Leaves input for the task's next run (and makes a heartbeat task's next check-in find work). */
export const addNote = Effect.fn("Tasks.addNote")(function*(id: string, input: typeof NewTaskNote.Type) {
  yield* Authorized("tasks:write")
  const principal = yield* requireCompany(input.companyId)
  yield* findChangeable(principal, id)
  const now = yield* currentDate
  const note = yield* TasksRepo.use((repo) =>
    repo.addNote({
      id: newId("note"),
      taskId: id,
      kind: "input",
      content: input.content,
      executionId: null,
      processedAt: null,
      createdAt: now
    })
  )
  return toTaskNote(note)
})

export const listNotes = Effect.fn("Tasks.listNotes")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("tasks:read")
  yield* findTask(principal, id)
  const { rows, total } = yield* TasksRepo.use((repo) => repo.listNotes(id, windowOf(request)))
  return toPage(rows.map(toTaskNote), total, request)
})
