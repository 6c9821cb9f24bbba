import { Schema } from "effect"
import { fromColumns, JsonObject, NumberColumn, Timestamp } from "../../storage/Columns.ts"

/** The scheduled-task area's records, each declared once; their row schemas read and write the tables. */

export const TaskRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  organizationId: Schema.String,
  /** The owning user; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  userId: Schema.NullOr(Schema.String),
  employeeId: Schema.String,
  name: Schema.String,
  prompt: Schema.String,
  scheduleType: Schema.Literals(["one_time", "recurring", "heartbeat"]),
  scheduledAt: Schema.NullOr(Timestamp),
  /** `{cron}` (recurring only) or `{intervalMinutes}` (recurring or heartbeat). */
  recurringConfig: Schema.NullOr(Schema.Struct({
    cron: Schema.optional(Schema.String),
    intervalMinutes: Schema.optional(Schema.Number)
  })),
  timezone: Schema.String,
  contextSettings: JsonObject,
  nextRunAt: Schema.NullOr(Timestamp),
  lastRunAt: Schema.NullOr(Timestamp),
  status: Schema.Literals(["active", "paused", "completed"]),
  runCount: NumberColumn,
  /** Null: no daily limit beyond the organization's credits. */
  dailyCreditLimit: Schema.NullOr(NumberColumn),
  templateId: Schema.NullOr(Schema.String),
  templateVersion: Schema.NullOr(NumberColumn),
  /** The queued execution of a requested run (`POST …/run`), until a worker takes it. */
  pendingExecutionId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type TaskRecord = typeof TaskRecord.Type
export type TaskStatus = TaskRecord["status"]

export interface TaskChange {
  readonly name?: string | undefined
  readonly prompt?: string | undefined
  readonly employeeId?: string | undefined
  readonly scheduleType?: TaskRecord["scheduleType"] | undefined
  readonly scheduledAt?: Date | null | undefined
  readonly recurringConfig?: TaskRecord["recurringConfig"] | undefined
  readonly timezone?: string | undefined
  readonly contextSettings?: Readonly<Record<string, unknown>> | undefined
  readonly dailyCreditLimit?: number | null | undefined
  readonly nextRunAt?: Date | null | undefined
  readonly status?: TaskStatus | undefined
}

export const ExecutionRecord = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  trigger: Schema.Literals(["scheduled", "heartbeat", "manual"]),
  status: Schema.Literals(["queued", "running", "succeeded", "failed"]),
  /** The occurrence run (scheduled, heartbeat) or the time the run was requested (manual). */
  scheduledFor: Timestamp,
  /** Workers that started this execution: more than one after a crash. */
  attempts: NumberColumn,
  model: Schema.String,
  output: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  inputTokens: NumberColumn,
  outputTokens: NumberColumn,
  credits: NumberColumn,
  startedAt: Schema.NullOr(Timestamp),
  finishedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
})
export type ExecutionRecord = typeof ExecutionRecord.Type
export type ExecutionTrigger = ExecutionRecord["trigger"]
export type ExecutionStatus = ExecutionRecord["status"]

/** What a finished run writes into its execution. */
export type ExecutionResult =
  & Pick<ExecutionRecord, "model" | "output" | "error" | "inputTokens" | "outputTokens" | "credits">
  & { readonly status: "succeeded" | "failed"; readonly finishedAt: Date }

/** An execution before any model call: no output, usage or finish time yet. */
export const newExecution = (
  fields: Pick<ExecutionRecord, "id" | "taskId" | "trigger" | "status" | "scheduledFor" | "attempts" | "startedAt" | "createdAt">
): ExecutionRecord => ({
  ...fields,
  model: "",
  output: null,
  error: null,
  inputTokens: 0,
  outputTokens: 0,
  credits: 0,
  finishedAt: null
})

const EvaluationCheck = Schema.Struct({ name: Schema.String, passed: Schema.Boolean, detail: Schema.String })
export type EvaluationCheck = typeof EvaluationCheck.Type

export const EvaluationRecord = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  executionId: Schema.String,
  passed: Schema.Boolean,
  /** Share of checks passed, 0 to 1. */
  score: NumberColumn,
  checks: Schema.Array(EvaluationCheck),
  createdAt: Timestamp
})
export type EvaluationRecord = typeof EvaluationRecord.Type

export interface ExecutionView extends ExecutionRecord {
  readonly evaluation: EvaluationRecord | null
}

export const DailyLogRecord = Schema.Struct({
  taskId: Schema.String,
  /** Local day in the task's time zone, `YYYY-MM-DD`. */
  day: Schema.String,
  runs: NumberColumn,
  failures: NumberColumn,
  checkIns: NumberColumn,
  credits: NumberColumn,
  inputTokens: NumberColumn,
  outputTokens: NumberColumn,
  stoppedReason: Schema.NullOr(Schema.String)
})
export type DailyLogRecord = typeof DailyLogRecord.Type

/** What one handled occurrence adds to its day. */
export type DayIncrement = Omit<DailyLogRecord, "taskId" | "day">

export const emptyDay: DayIncrement = {
  runs: 0,
  failures: 0,
  checkIns: 0,
  credits: 0,
  inputTokens: 0,
  outputTokens: 0,
  stoppedReason: null
}

export const NoteRecord = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  kind: Schema.Literals(["input", "heartbeat", "daily_limit"]),
  content: Schema.String,
  /** The execution that consumed an input note, or that a check-in started. */
  executionId: Schema.NullOr(Schema.String),
  /** When a run consumed an input note; null while it waits. */
  processedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
})
export type NoteRecord = typeof NoteRecord.Type
export type NoteKind = NoteRecord["kind"]

/** A due task a worker holds: only the holder of `token` may record its run. */
export interface Claim {
  readonly task: TaskRecord
  readonly token: string
}

/** What a handled occurrence changes on its task; the lease is released with it. */
export interface TaskAdvance {
  /** A run happened: `runCount` + 1 and `lastRunAt` = now. */
  readonly ran: boolean
  readonly nextRunAt: Date | null
  readonly status: TaskStatus
  /** The requested run this handled, to clear from the task. */
  readonly handledExecutionId: string | null
}

export const TaskRow = fromColumns(TaskRecord)
export const ExecutionRow = fromColumns(ExecutionRecord)
export const EvaluationRow = fromColumns(EvaluationRecord)
export const DailyLogRow = fromColumns(DailyLogRecord)
export const NoteRow = fromColumns(NoteRecord)
