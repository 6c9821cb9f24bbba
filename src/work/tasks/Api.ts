import { Schema } from "effect"
import { AgentToolList } from "../agents/ToolNames.ts"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ModelId } from "../agents/Api.ts"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { IsoDate, JsonObject, NonBlankText, NonEmpty } from "../../platform/Schemas.ts"
import { isFiveFieldCron, isIanaZone } from "./Occurrences.ts"

export const ScheduleType = Schema.Literals(["one_time", "recurring", "heartbeat"])

export const TaskStatus = Schema.Literals(["active", "paused", "completed"])

export const TimeZone = Schema.String.check(
  Schema.makeFilter((zone: string) => isIanaZone(zone) || "must be an IANA time zone such as Europe/Berlin or UTC")
)

const CronExpression = Schema.String.check(
  Schema.makeFilter((expression: string) =>
    isFiveFieldCron(expression) || "must be a 5-field cron expression: minute hour day-of-month month day-of-week"
  )
)

/** At most one year between runs. */
const IntervalMinutes = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 525_600 }))

/** `{cron}` for recurring tasks, or `{intervalMinutes}` for recurring and heartbeat tasks. */
export const RecurringConfig = Schema.Struct({
  cron: Schema.optional(CronExpression),
  intervalMinutes: Schema.optional(IntervalMinutes)
}).check(
  Schema.makeFilter((config) =>
    (config.cron === undefined) !== (config.intervalMinutes === undefined) ||
    "must have exactly one of cron or intervalMinutes"
  )
).annotate({ identifier: "RecurringConfig" })

/** Free-form run settings; `model` and `maxTokens` steer the model calls, `tools` names the agent tools the run may use. */
export const ContextSettings = Schema.StructWithRest(
  Schema.Struct({
    model: Schema.optional(ModelId),
    maxTokens: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200_000 }))),
    tools: Schema.optional(AgentToolList)
  }),
  [JsonObject]
).annotate({ identifier: "ContextSettings" })

const DailyCreditLimit = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

const Prompt = NonBlankText(20_000)

/** The spec's Scheduled task; times are ISO 8601 strings. */
export const ScheduledTask = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The owning user (a company key's: its creator); null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  userId: Schema.NullOr(Schema.String),
  employeeId: Schema.String,
  name: Schema.String,
  prompt: Schema.String,
  scheduleType: ScheduleType,
  scheduledAt: Schema.NullOr(IsoDate),
  recurringConfig: Schema.NullOr(RecurringConfig),
  contextSettings: JsonObject,
  timezone: Schema.String,
  nextRunAt: Schema.NullOr(IsoDate),
  lastRunAt: Schema.NullOr(IsoDate),
  status: TaskStatus,
  runCount: Schema.Int,
  /** Null: no daily limit beyond the organization's credits. */
  dailyCreditLimit: Schema.NullOr(Schema.Int),
  templateId: Schema.NullOr(Schema.String),
  templateVersion: Schema.NullOr(Schema.Int),
  createdDate: IsoDate,
  updatedDate: IsoDate
}).annotate({ identifier: "ScheduledTask" })

export const NewScheduledTask = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: NonEmpty,
  prompt: Prompt,
  scheduleType: ScheduleType,
  employeeId: NonEmpty,
  scheduledAt: Schema.optional(IsoDate),
  recurringConfig: Schema.optional(RecurringConfig),
  timezone: Schema.optional(TimeZone),
  contextSettings: Schema.optional(ContextSettings),
  dailyCreditLimit: Schema.optional(DailyCreditLimit)
}).annotate({
  examples: [
    {
      name: "Morning brief",
      prompt: "Summarize yesterday's notes in five bullet points.",
      scheduleType: "recurring",
      employeeId: "emp_019a4f2c8e7b7c3d9a1e5f6b2c3d4e5f",
      recurringConfig: { cron: "0 8 * * 1-5" },
      timezone: "Europe/Berlin",
      dailyCreditLimit: 50
    },
    {
      name: "Inbox heartbeat",
      prompt: "Check the task notes and answer what needs an answer.",
      scheduleType: "heartbeat",
      employeeId: "emp_019a4f2c8e7b7c3d9a1e5f6b2c3d4e5f",
      recurringConfig: { intervalMinutes: 30 }
    }
  ]
})

/** Every field optional: only those supplied change; null clears a nullable one. */
export const ScheduledTaskPatch = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: Schema.optional(NonEmpty),
  prompt: Schema.optional(Prompt),
  scheduleType: Schema.optional(ScheduleType),
  employeeId: Schema.optional(NonEmpty),
  scheduledAt: Schema.optional(Schema.NullOr(IsoDate)),
  recurringConfig: Schema.optional(Schema.NullOr(RecurringConfig)),
  timezone: Schema.optional(TimeZone),
  contextSettings: Schema.optional(ContextSettings),
  dailyCreditLimit: Schema.optional(Schema.NullOr(DailyCreditLimit))
})

/** The body of the task actions (pause, resume, run, reset): `{companyId?}`, or none at all (`null` when typed). */
export const TaskActionBody = Schema.Struct({ companyId: Schema.optional(Schema.String) })

/** An empty request body decodes as `null`, so the action endpoints take no body as well as `{}`. */
const actionPayload = [TaskActionBody, Schema.Null]

export const Evaluation = Schema.Struct({
  passed: Schema.Boolean,
  /** Share of checks passed, 0 to 1. */
  score: Schema.Number,
  checks: Schema.Array(Schema.Struct({ name: Schema.String, passed: Schema.Boolean, detail: Schema.String })),
  createdDate: IsoDate
}).annotate({ identifier: "TaskEvaluation" })

export const TaskExecution = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  trigger: Schema.Literals(["scheduled", "heartbeat", "manual"]),
  status: Schema.Literals(["queued", "running", "succeeded", "failed"]),
  /** The occurrence this run is for, or when a manual run was requested. */
  scheduledFor: IsoDate,
  attempts: Schema.Int,
  model: Schema.String,
  output: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  credits: Schema.Int,
  startedAt: Schema.NullOr(IsoDate),
  finishedAt: Schema.NullOr(IsoDate),
  durationMs: Schema.NullOr(Schema.Int),
  evaluation: Schema.NullOr(Evaluation),
  createdDate: IsoDate
}).annotate({ identifier: "TaskExecution" })

export const TaskNote = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  kind: Schema.Literals(["input", "heartbeat", "daily_limit"]),
  content: Schema.String,
  executionId: Schema.NullOr(Schema.String),
  /** When a run consumed an input note; null while it waits. */
  processedAt: Schema.NullOr(IsoDate),
  createdDate: IsoDate
}).annotate({ identifier: "TaskNote" })

export const NewTaskNote = Schema.Struct({ companyId: Schema.optional(Schema.String), content: NonBlankText(10_000) })

const taskId = { task_id: Schema.String }
const created = HttpApiSchema.status(201)
const changeErrors = [BadRequest, Forbidden, NotFound]

/** `POST /scheduled-tasks/{task_id}/<name>`, answering the task. */
const unknownTask = "for an unknown id or another company's task"

/** `POST /scheduled-tasks/{task_id}/<name>`, answering the task. */
const action = <const Name extends string>(name: Name, summary: string, does: string) =>
  HttpApiEndpoint.post(name, `/scheduled-tasks/:task_id/${name}`, {
    params: taskId,
    payload: actionPayload,
    success: ScheduledTask,
    error: changeErrors
  }).pipe(described({ summary, does, who: "tasks:write", errors: { 404: unknownTask } }))

export class ScheduledTasksApi extends HttpApiGroup.make("scheduledTasks")
  .annotateMerge(OpenApi.annotations({
    description: "Prompts an AI employee runs once, on a recurring schedule or as a heartbeat, with executions, notes and a daily credit limit.",
    override: { "x-displayName": "Scheduled tasks" }
  })).add(
  HttpApiEndpoint.post("create", "/scheduled-tasks", {
    payload: NewScheduledTask,
    success: ScheduledTask.pipe(created),
    error: changeErrors
  }).pipe(described({
    summary: "Create a scheduled task",
    does: "Schedules a prompt for an employee: `one_time` at `scheduledAt`, `recurring` by cron or interval, or `heartbeat` every interval, optionally with a daily credit limit.",
    who: "tasks:write",
    errors: { 400: "naming the invalid field (schedule fields that do not fit the type, an unknown employee)", 404: "for another company" }
  })),
  HttpApiEndpoint.get("list", "/scheduled-tasks", { query: PageQuery, success: Page(ScheduledTask), error: [Forbidden] }).pipe(described({
    summary: "List scheduled tasks",
    does: "The company's scheduled tasks, newest first, paginated.",
    who: "tasks:read"
  })),
  HttpApiEndpoint.get("get", "/scheduled-tasks/:task_id", {
    params: taskId,
    success: ScheduledTask,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a scheduled task",
    does: "One task with its status, next and last run.",
    who: "tasks:read",
    errors: { 404: unknownTask }
  })),
  HttpApiEndpoint.patch("update", "/scheduled-tasks/:task_id", {
    params: taskId,
    payload: ScheduledTaskPatch,
    success: ScheduledTask,
    error: changeErrors
  }).pipe(described({
    summary: "Change a scheduled task",
    does: "Changes a task's fields or schedule (the next run is computed again; `null` clears the daily limit).",
    who: "tasks:write",
    errors: { 404: unknownTask }
  })),
  HttpApiEndpoint.delete("delete", "/scheduled-tasks/:task_id", {
    params: taskId,
    success: ScheduledTask,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a scheduled task",
    does: "Deletes a task (it runs no more) and answers it.",
    who: "tasks:write",
    errors: { 404: unknownTask }
  })),
  action(
    "pause",
    "Pause a scheduled task",
    "Stops a task's runs until it is resumed (`nextRunAt` becomes null); pausing a paused task answers it unchanged."
  ),
  action(
    "resume",
    "Resume a scheduled task",
    "Resumes a paused task from now: occurrences missed while paused do not run."
  ),
  action(
    "reset",
    "Reset a scheduled task",
    "Resets the task's run state as the spec describes and answers the task."
  ),
  HttpApiEndpoint.post("run", "/scheduled-tasks/:task_id/run", {
    params: taskId,
    payload: actionPayload,
    success: TaskExecution.pipe(created),
    error: changeErrors
  }).pipe(described({
    summary: "Run a scheduled task now",
    does: "Queues one execution now (201 with the queued execution); a worker runs it like a scheduled occurrence and bills it.",
    who: "tasks:write",
    errors: { 404: unknownTask }
  })),
  HttpApiEndpoint.get("listExecutions", "/scheduled-tasks/:task_id/executions", {
    params: taskId,
    query: PageQuery,
    success: Page(TaskExecution),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "List a task's executions",
    does: "The task's executions (queued, running, succeeded, failed) with output, usage and timing, newest first, paginated.",
    who: "tasks:read"
  })),
  HttpApiEndpoint.post("addNote", "/scheduled-tasks/:task_id/notes", {
    params: taskId,
    payload: NewTaskNote,
    success: TaskNote.pipe(created),
    error: changeErrors
  }).pipe(described({
    summary: "Add a note to a task",
    does: "Adds a note the task's next runs read as input.",
    who: "tasks:write",
    errors: { 404: unknownTask }
  })),
  HttpApiEndpoint.get("listNotes", "/scheduled-tasks/:task_id/notes", {
    params: taskId,
    query: PageQuery,
    success: Page(TaskNote),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "List a task's notes",
    does: "The task's notes (input, heartbeat, daily limit), newest first, paginated.",
    who: "tasks:read"
  }))
).middleware(Authentication).prefix("/api/v0") {}
