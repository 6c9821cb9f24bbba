import { Context, type Effect, type Option } from "effect"
import type { Window } from "../storage/Windows.ts"
import type { RecurringConfig, ScheduleSpec, ScheduleType } from "./Occurrences.ts"

export type TaskStatus = "active" | "paused" | "completed"

export interface TaskRecord extends ScheduleSpec {
  readonly id: string
  readonly companyId: string
  readonly organizationId: string
  /** The owning user; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  readonly userId: string | null
  readonly employeeId: string
  readonly name: string
  readonly prompt: string
  readonly contextSettings: Readonly<Record<string, unknown>>
  readonly nextRunAt: Date | null
  readonly lastRunAt: Date | null
  readonly status: TaskStatus
  readonly runCount: number
  /** Null: no daily limit beyond the organization's credits. */
  readonly dailyCreditLimit: number | null
  readonly templateId: string | null
  readonly templateVersion: number | null
  /** The queued execution of a requested run (`POST …/run`), until a worker takes it. */
  readonly pendingExecutionId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface TaskChange {
  readonly name?: string | undefined
  readonly prompt?: string | undefined
  readonly employeeId?: string | undefined
  readonly scheduleType?: ScheduleType | undefined
  readonly scheduledAt?: Date | null | undefined
  readonly recurringConfig?: RecurringConfig | null | undefined
  readonly timezone?: string | undefined
  readonly contextSettings?: Readonly<Record<string, unknown>> | undefined
  readonly dailyCreditLimit?: number | null | undefined
  readonly nextRunAt?: Date | null | undefined
  readonly status?: TaskStatus | undefined
}

export type ExecutionTrigger = "scheduled" | "heartbeat" | "manual"
export type ExecutionStatus = "queued" | "running" | "succeeded" | "failed"

export interface ExecutionRecord {
  readonly id: string
  readonly taskId: string
  readonly trigger: ExecutionTrigger
  readonly status: ExecutionStatus
  /** The occurrence run (scheduled, heartbeat) or the time the run was requested (manual). */
  readonly scheduledFor: Date
  /** Workers that started this execution: more than one after a crash. */
  readonly attempts: number
  readonly model: string
  readonly output: string | null
  readonly error: string | null
  readonly inputTokens: number
  readonly outputTokens: number
  readonly credits: number
  readonly startedAt: Date | null
  readonly finishedAt: Date | null
  readonly createdAt: Date
}

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

export interface EvaluationCheck {
  readonly name: string
  readonly passed: boolean
  readonly detail: string
}

export interface EvaluationRecord {
  readonly id: string
  readonly taskId: string
  readonly executionId: string
  readonly passed: boolean
  /** Share of checks passed, 0 to 1. */
  readonly score: number
  readonly checks: ReadonlyArray<EvaluationCheck>
  readonly createdAt: Date
}

export interface ExecutionView extends ExecutionRecord {
  readonly evaluation: EvaluationRecord | null
}

export interface DailyLogRecord {
  readonly taskId: string
  /** Local day in the task's time zone, `YYYY-MM-DD`. */
  readonly day: string
  readonly runs: number
  readonly failures: number
  readonly checkIns: number
  readonly credits: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly stoppedReason: string | null
}

/** What one handled occurrence adds to its day. */
export type DayIncrement = Omit<DailyLogRecord, "taskId" | "day">

export type NoteKind = "input" | "heartbeat" | "daily_limit"

export interface NoteRecord {
  readonly id: string
  readonly taskId: string
  readonly kind: NoteKind
  readonly content: string
  /** The execution that consumed an input note, or that a check-in started. */
  readonly executionId: string | null
  /** When a run consumed an input note; null while it waits. */
  readonly processedAt: Date | null
  readonly createdAt: Date
}

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

type Page<A> = Effect.Effect<{ readonly rows: ReadonlyArray<A>; readonly total: number }>

/**
 * Scheduled tasks and their history. The worker side claims due tasks with a
 * lease (`claimDue`), and records a handled occurrence inside `atomically`
 * after `lockClaimed` proved the lease is still its own.
 */
export interface TasksRepository {
  readonly create: (task: TaskRecord) => Effect.Effect<TaskRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<TaskRecord>>
  readonly list: (companyId: string, window: Window) => Page<TaskRecord>
  readonly update: (companyId: string, id: string, change: TaskChange, now: Date) => Effect.Effect<Option.Option<TaskRecord>>
  /** Soft-deletes the task; its history stays for audit but is never shown again. */
  readonly remove: (companyId: string, id: string, now: Date) => Effect.Effect<boolean>
  /** True while a worker holds an unexpired lease on the task. */
  readonly isLeased: (id: string, now: Date) => Effect.Effect<boolean>
  /**
   * Soft-deletes executions, evaluations, daily logs and notes, zeroes the run
   * counters and drops a queued run; settings and status stay.
   */
  readonly reset: (companyId: string, id: string, now: Date) => Effect.Effect<Option.Option<TaskRecord>>
  /** Queues `execution` as the task's requested run, or answers the one already queued. */
  readonly requestRun: (companyId: string, id: string, execution: ExecutionRecord) => Effect.Effect<Option.Option<ExecutionRecord>>
  readonly listExecutions: (taskId: string, window: Window) => Page<ExecutionView>
  readonly addNote: (note: NoteRecord) => Effect.Effect<NoteRecord>
  readonly listNotes: (taskId: string, window: Window) => Page<NoteRecord>

  /**
   * Leases up to `limit` tasks that are due at `now` (an active task whose
   * `nextRunAt` has come, or any task with a requested run) and that no
   * unexpired lease holds, until `expiresAt`. Concurrent callers never get the same task.
   */
  readonly claimDue: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ReadonlyArray<Claim>>
  /** Extends a held lease; false when it is no longer held (expired and taken, or the task deleted). */
  readonly renewLease: (id: string, token: string, expiresAt: Date) => Effect.Effect<boolean>
  /**
   * Marks the execution running: a new row, or the row of the same occurrence
   * (or requested run) that a crashed worker left, with one more attempt.
   */
  readonly startExecution: (execution: ExecutionRecord) => Effect.Effect<ExecutionRecord>
  /** Input notes no run has consumed yet, oldest first. */
  readonly pendingInputs: (taskId: string) => Effect.Effect<ReadonlyArray<NoteRecord>>
  readonly dailyLog: (taskId: string, day: string) => Effect.Effect<Option.Option<DailyLogRecord>>
  /** Credits the task's latest succeeded run cost (0 before its first). */
  readonly lastRunCredits: (taskId: string) => Effect.Effect<number>

  /** Runs `effect` as one transaction. */
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The claimed task, locked for recording, if `token` still holds its lease and it was not deleted. */
  readonly lockClaimed: (id: string, token: string) => Effect.Effect<Option.Option<TaskRecord>>
  readonly finishExecution: (id: string, result: ExecutionResult) => Effect.Effect<void>
  readonly addEvaluation: (evaluation: EvaluationRecord) => Effect.Effect<void>
  readonly recordDay: (taskId: string, day: string, increment: DayIncrement, now: Date) => Effect.Effect<void>
  readonly consumeInputs: (noteIds: ReadonlyArray<string>, executionId: string, now: Date) => Effect.Effect<void>
  readonly advance: (id: string, advance: TaskAdvance, now: Date) => Effect.Effect<void>
}

export const emptyDay: DayIncrement = {
  runs: 0,
  failures: 0,
  checkIns: 0,
  credits: 0,
  inputTokens: 0,
  outputTokens: 0,
  stoppedReason: null
}

/** Scheduled tasks, their executions, evaluations, daily logs and notes: `tasksRepoSql` implements it. */
export class TasksRepo extends Context.Service<TasksRepo, TasksRepository>()("tasks/TasksRepo") {}
