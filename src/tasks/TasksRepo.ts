import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { MemoryStore, memoryTable, type Tables } from "../storage/MemoryStore.ts"
import { jsonParam, toNumber } from "../storage/Rows.ts"
import { movedForward, newestFirstPage, selectPage, type Window } from "../storage/Windows.ts"
import type { RecurringConfig, ScheduleSpec, ScheduleType } from "./Occurrences.ts"

export type TaskStatus = "active" | "paused" | "completed"

export interface TaskRecord extends ScheduleSpec {
  readonly id: string
  readonly companyId: string
  readonly organizationId: string
  /** The owning user; null for a task made with a company API key. */
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

  /** Runs `effect` as one transaction (the memory backend: without interruption). */
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

/** The memory backend's scheduledTasks (see `MemoryStore`). */
export const scheduledTasksTable = memoryTable("scheduledTasks", (): Map<string, StoredTask> => new Map())

/** The memory backend's taskExecutions (see `MemoryStore`). */
export const taskExecutionsTable = memoryTable("taskExecutions", (): Map<string, StoredExecution> => new Map())

/** The memory backend's taskEvaluations (see `MemoryStore`). */
export const taskEvaluationsTable = memoryTable("taskEvaluations", (): Map<string, StoredEvaluation> => new Map())

/** The memory backend's taskDailyLogs (see `MemoryStore`). */
export const taskDailyLogsTable = memoryTable("taskDailyLogs", (): Map<string, StoredDailyLog> => new Map())

/** The memory backend's taskNotes (see `MemoryStore`). */
export const taskNotesTable = memoryTable("taskNotes", (): Map<string, StoredNote> => new Map())

export class TasksRepo extends Context.Service<TasksRepo, TasksRepository>()("tasks/TasksRepo") {
  static readonly sql = Layer.effect(TasksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const live = (companyId: string) => sql`company_id = ${companyId} AND deleted_at IS NULL`
    const singleTask = (rows: ReadonlyArray<TaskRow>) => Option.map(Option.fromNullishOr(rows[0]), taskFromRow)
    const json = (value: unknown) => (value === null ? null : jsonParam(value))
    const softDeleteHistory = (taskId: string, now: Date) =>
      Effect.forEach(
        ["task_executions", "task_evaluations", "task_daily_logs", "task_notes"],
        (table) => sql`UPDATE ${sql(table)} SET deleted_at = ${now} WHERE task_id = ${taskId} AND deleted_at IS NULL`,
        { discard: true }
      )
    const evaluationsOf = (executionIds: ReadonlyArray<string>) =>
      executionIds.length === 0
        ? Effect.succeed([])
        : sql<EvaluationRow>`SELECT * FROM task_evaluations
            WHERE ${sql.in("execution_id", executionIds)} AND deleted_at IS NULL`
    return {
      create: Effect.fn("TasksRepo.create")(function*(task) {
        const rows = yield* sql<TaskRow>`
          INSERT INTO scheduled_tasks (id, company_id, organization_id, user_id, employee_id, name, prompt,
            schedule_type, scheduled_at, recurring_config, context_settings, timezone, next_run_at, last_run_at,
            status, run_count, daily_credit_limit, template_id, template_version, pending_execution_id,
            created_at, updated_at)
          VALUES (${task.id}, ${task.companyId}, ${task.organizationId}, ${task.userId}, ${task.employeeId},
            ${task.name}, ${task.prompt}, ${task.scheduleType}, ${task.scheduledAt},
            ${json(task.recurringConfig)}::jsonb, ${jsonParam(task.contextSettings)}::jsonb, ${task.timezone},
            ${task.nextRunAt}, ${task.lastRunAt}, ${task.status}, ${task.runCount}, ${task.dailyCreditLimit},
            ${task.templateId}, ${task.templateVersion}, ${task.pendingExecutionId}, ${task.createdAt},
            ${task.updatedAt})
          RETURNING *`
        return taskFromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("TasksRepo.get")(function*(companyId, id) {
        return singleTask(yield* sql<TaskRow>`SELECT * FROM scheduled_tasks WHERE ${live(companyId)} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("TasksRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<TaskRow>(sql, "scheduled_tasks", live(companyId), window)
        return { rows: page.rows.map(taskFromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("TasksRepo.update")(function*(companyId, id, change, now) {
        const set = (column: string, value: unknown, cast = "") =>
          value === undefined ? [] : [sql`${sql(column)} = ${value}${sql.literal(cast)}`]
        const assignments = [
          ...set("name", change.name),
          ...set("prompt", change.prompt),
          ...set("employee_id", change.employeeId),
          ...set("schedule_type", change.scheduleType),
          ...set("scheduled_at", change.scheduledAt),
          ...set("recurring_config", change.recurringConfig === undefined ? undefined : json(change.recurringConfig), "::jsonb"),
          ...set("timezone", change.timezone),
          ...set("context_settings", change.contextSettings === undefined ? undefined : jsonParam(change.contextSettings), "::jsonb"),
          ...set("daily_credit_limit", change.dailyCreditLimit),
          ...set("next_run_at", change.nextRunAt),
          ...set("status", change.status),
          sql`updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')`
        ]
        return singleTask(yield* sql<TaskRow>`
          UPDATE scheduled_tasks SET ${sql.csv(assignments)} WHERE ${live(companyId)} AND id = ${id} RETURNING *`)
      }, Effect.orDie),
      remove: Effect.fn("TasksRepo.remove")(function*(companyId, id, now) {
        const rows = yield* sql`UPDATE scheduled_tasks SET deleted_at = ${now}, pending_execution_id = NULL
          WHERE ${live(companyId)} AND id = ${id} RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      isLeased: Effect.fn("TasksRepo.isLeased")(function*(id, now) {
        const rows = yield* sql`SELECT id FROM scheduled_tasks WHERE id = ${id} AND lease_expires_at > ${now}`
        return rows.length > 0
      }, Effect.orDie),
      reset: Effect.fn("TasksRepo.reset")(function*(companyId, id, now) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<TaskRow>`
            UPDATE scheduled_tasks SET run_count = 0, last_run_at = NULL, pending_execution_id = NULL,
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE ${live(companyId)} AND id = ${id} RETURNING *`
          if (rows.length > 0) yield* softDeleteHistory(id, now)
          return singleTask(rows)
        }))
      }, Effect.orDie),
      requestRun: Effect.fn("TasksRepo.requestRun")(function*(companyId, id, execution) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const tasks = yield* sql<TaskRow>`SELECT * FROM scheduled_tasks WHERE ${live(companyId)} AND id = ${id} FOR UPDATE`
          if (tasks.length === 0) return Option.none()
          const pending = tasks[0].pending_execution_id
          if (pending !== null) {
            const queued = yield* sql<ExecutionRow>`SELECT * FROM task_executions WHERE id = ${pending}`
            return Option.some(executionFromRow(queued[0]))
          }
          const inserted = yield* sql<ExecutionRow>`INSERT INTO task_executions ${sql.insert(executionToRow(execution))} RETURNING *`
          yield* sql`UPDATE scheduled_tasks SET pending_execution_id = ${execution.id} WHERE id = ${id}`
          return Option.some(executionFromRow(inserted[0]))
        }))
      }, Effect.orDie),
      listExecutions: Effect.fn("TasksRepo.listExecutions")(function*(taskId, window) {
        const page = yield* selectPage<ExecutionRow>(
          sql,
          "task_executions",
          sql`task_id = ${taskId} AND deleted_at IS NULL`,
          window
        )
        const evaluations = (yield* evaluationsOf(page.rows.map((row) => row.id))).map(evaluationFromRow)
        return {
          rows: page.rows.map((row) => ({
            ...executionFromRow(row),
            evaluation: evaluations.find((evaluation) => evaluation.executionId === row.id) ?? null
          })),
          total: page.total
        }
      }, Effect.orDie),
      addNote: Effect.fn("TasksRepo.addNote")(function*(note) {
        const rows = yield* sql<NoteRow>`INSERT INTO task_notes ${sql.insert(noteToRow(note))} RETURNING *`
        return noteFromRow(rows[0])
      }, Effect.orDie),
      listNotes: Effect.fn("TasksRepo.listNotes")(function*(taskId, window) {
        const page = yield* selectPage<NoteRow>(sql, "task_notes", sql`task_id = ${taskId} AND deleted_at IS NULL`, window)
        return { rows: page.rows.map(noteFromRow), total: page.total }
      }, Effect.orDie),

      claimDue: Effect.fn("TasksRepo.claimDue")(function*(now, expiresAt, limit) {
        const token = newId("lease")
        const free = sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
        const rows = yield* sql<TaskRow>`
          UPDATE scheduled_tasks SET lease_token = ${token}, lease_expires_at = ${expiresAt}
          WHERE id IN (
            SELECT id FROM scheduled_tasks
            WHERE deleted_at IS NULL AND ${free}
              AND ((status = 'active' AND next_run_at <= ${now}) OR pending_execution_id IS NOT NULL)
            ORDER BY next_run_at NULLS FIRST
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          ) AND ${free}
          RETURNING *`
        return rows.map((row) => ({ task: taskFromRow(row), token }))
      }, Effect.orDie),
      renewLease: Effect.fn("TasksRepo.renewLease")(function*(id, token, expiresAt) {
        const rows = yield* sql`UPDATE scheduled_tasks SET lease_expires_at = ${expiresAt}
          WHERE id = ${id} AND lease_token = ${token} AND deleted_at IS NULL RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      startExecution: Effect.fn("TasksRepo.startExecution")(function*(execution) {
        const rows = execution.trigger === "manual"
          ? yield* sql<ExecutionRow>`
              UPDATE task_executions SET status = 'running', attempts = attempts + 1, started_at = ${execution.startedAt}
              WHERE id = ${execution.id} RETURNING *`
          : yield* sql<ExecutionRow>`
              INSERT INTO task_executions ${sql.insert(executionToRow(execution))}
              ON CONFLICT (task_id, scheduled_for) WHERE deleted_at IS NULL AND trigger <> 'manual'
              DO UPDATE SET status = 'running', attempts = task_executions.attempts + 1,
                started_at = EXCLUDED.started_at
              RETURNING *`
        return executionFromRow(rows[0])
      }, Effect.orDie),
      pendingInputs: Effect.fn("TasksRepo.pendingInputs")(function*(taskId) {
        const rows = yield* sql<NoteRow>`SELECT * FROM task_notes
          WHERE task_id = ${taskId} AND kind = 'input' AND processed_at IS NULL AND deleted_at IS NULL ORDER BY id`
        return rows.map(noteFromRow)
      }, Effect.orDie),
      dailyLog: Effect.fn("TasksRepo.dailyLog")(function*(taskId, day) {
        const rows = yield* sql<DailyLogRow>`SELECT * FROM task_daily_logs
          WHERE task_id = ${taskId} AND day = ${day} AND deleted_at IS NULL`
        return Option.map(Option.fromNullishOr(rows[0]), dailyLogFromRow)
      }, Effect.orDie),
      lastRunCredits: Effect.fn("TasksRepo.lastRunCredits")(function*(taskId) {
        const rows = yield* sql<{ readonly credits: unknown }>`SELECT credits FROM task_executions
          WHERE task_id = ${taskId} AND status = 'succeeded' AND deleted_at IS NULL
          ORDER BY finished_at DESC LIMIT 1`
        return toNumber(rows[0]?.credits)
      }, Effect.orDie),

      atomically: (effect) => sql.withTransaction(effect).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die)),
      lockClaimed: Effect.fn("TasksRepo.lockClaimed")(function*(id, token) {
        return singleTask(yield* sql<TaskRow>`SELECT * FROM scheduled_tasks
          WHERE id = ${id} AND lease_token = ${token} AND deleted_at IS NULL FOR UPDATE`)
      }, Effect.orDie),
      finishExecution: Effect.fn("TasksRepo.finishExecution")(function*(id, result) {
        yield* sql`UPDATE task_executions SET status = ${result.status}, model = ${result.model},
          output = ${result.output}, error = ${result.error}, input_tokens = ${result.inputTokens},
          output_tokens = ${result.outputTokens}, credits = ${result.credits}, finished_at = ${result.finishedAt}
          WHERE id = ${id}`
      }, Effect.orDie),
      addEvaluation: Effect.fn("TasksRepo.addEvaluation")(function*(evaluation) {
        yield* sql`INSERT INTO task_evaluations ${
          sql.insert({
            id: evaluation.id,
            task_id: evaluation.taskId,
            execution_id: evaluation.executionId,
            passed: evaluation.passed,
            score: evaluation.score,
            checks: jsonParam(evaluation.checks),
            created_at: evaluation.createdAt
          })
        }`
      }, Effect.orDie),
      recordDay: Effect.fn("TasksRepo.recordDay")(function*(taskId, day, increment, now) {
        yield* sql`
          INSERT INTO task_daily_logs (id, task_id, day, runs, failures, check_ins, credits, input_tokens,
            output_tokens, stopped_reason, updated_at)
          VALUES (${newId("day")}, ${taskId}, ${day}, ${increment.runs}, ${increment.failures}, ${increment.checkIns},
            ${increment.credits}, ${increment.inputTokens}, ${increment.outputTokens}, ${increment.stoppedReason}, ${now})
          ON CONFLICT (task_id, day) WHERE deleted_at IS NULL DO UPDATE SET
            runs = task_daily_logs.runs + EXCLUDED.runs,
            failures = task_daily_logs.failures + EXCLUDED.failures,
            check_ins = task_daily_logs.check_ins + EXCLUDED.check_ins,
            credits = task_daily_logs.credits + EXCLUDED.credits,
            input_tokens = task_daily_logs.input_tokens + EXCLUDED.input_tokens,
            output_tokens = task_daily_logs.output_tokens + EXCLUDED.output_tokens,
            stopped_reason = coalesce(EXCLUDED.stopped_reason, task_daily_logs.stopped_reason),
            updated_at = EXCLUDED.updated_at`
      }, Effect.orDie),
      consumeInputs: Effect.fn("TasksRepo.consumeInputs")(function*(noteIds, executionId, now) {
        if (noteIds.length === 0) return
        yield* sql`UPDATE task_notes SET processed_at = ${now}, execution_id = ${executionId}
          WHERE ${sql.in("id", noteIds)}`
      }, Effect.orDie),
      advance: Effect.fn("TasksRepo.advance")(function*(id, advance, now) {
        yield* sql`UPDATE scheduled_tasks SET
            run_count = run_count + ${advance.ran ? 1 : 0},
            last_run_at = ${advance.ran ? sql`${now}` : sql`last_run_at`},
            next_run_at = ${advance.nextRunAt},
            status = ${advance.status},
            pending_execution_id = CASE WHEN pending_execution_id = ${advance.handledExecutionId}
              THEN NULL ELSE pending_execution_id END,
            lease_token = NULL,
            lease_expires_at = NULL
          WHERE id = ${id}`
      }, Effect.orDie)
    }
  }))

  static readonly memory = Layer.effect(TasksRepo, MemoryStore.useSync((store): TasksRepository => {
    const liveTask = (tables: Tables, companyId: string | undefined, id: string) => {
      const task = tables(scheduledTasksTable).get(id)
      return task !== undefined && task.deletedAt === null && (companyId === undefined || task.companyId === companyId)
        ? task
        : undefined
    }
    const recordOf = ({ leaseToken: _, leaseExpiresAt: __, deletedAt: ___, ...task }: StoredTask): TaskRecord => task
    const liveRows = <A extends { readonly taskId: string; readonly deletedAt: Date | null }>(
      rows: Iterable<A>,
      taskId: string
    ) => [...rows].filter((row) => row.taskId === taskId && row.deletedAt === null)
    const softDelete = <A extends { readonly taskId: string; readonly deletedAt: Date | null }>(
      rows: Map<string, A>,
      taskId: string,
      now: Date
    ) => {
      for (const [key, row] of rows) {
        if (row.taskId === taskId && row.deletedAt === null) rows.set(key, { ...row, deletedAt: now })
      }
    }
    const withoutDeletion = <A extends { readonly deletedAt: Date | null }>({ deletedAt: _, ...row }: A) => row
    const leaseFree = (task: StoredTask, now: Date) =>
      task.leaseExpiresAt === null || task.leaseExpiresAt.getTime() <= now.getTime()
    const isDue = (task: StoredTask, now: Date) =>
      task.deletedAt === null &&
      ((task.status === "active" && task.nextRunAt !== null && task.nextRunAt.getTime() <= now.getTime()) ||
        task.pendingExecutionId !== null)
    return {
      create: (task) =>
        store.write((tables) => {
          tables(scheduledTasksTable).set(task.id, { ...task, leaseToken: null, leaseExpiresAt: null, deletedAt: null })
          return task
        }),
      get: (companyId, id) =>
        store.read((tables) => Option.map(Option.fromNullishOr(liveTask(tables, companyId, id)), recordOf)),
      list: (companyId, window) =>
        store.read((tables) =>
          newestFirstPage(
            [...tables(scheduledTasksTable).values()]
              .filter((task) => task.companyId === companyId && task.deletedAt === null)
              .map(recordOf),
            window
          )
        ),
      update: (companyId, id, change, now) =>
        store.write((tables) => {
          const task = liveTask(tables, companyId, id)
          if (task === undefined) return Option.none()
          const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
          const changed: StoredTask = { ...task, ...defined, updatedAt: movedForward(task.updatedAt, now) }
          tables(scheduledTasksTable).set(id, changed)
          return Option.some(recordOf(changed))
        }),
      remove: (companyId, id, now) =>
        store.write((tables) => {
          const task = liveTask(tables, companyId, id)
          if (task === undefined) return false
          tables(scheduledTasksTable).set(id, { ...task, deletedAt: now, pendingExecutionId: null })
          return true
        }),
      isLeased: (id, now) =>
        store.read((tables) => {
          const task = tables(scheduledTasksTable).get(id)
          return task !== undefined && !leaseFree(task, now)
        }),
      reset: (companyId, id, now) =>
        store.write((tables) => {
          const task = liveTask(tables, companyId, id)
          if (task === undefined) return Option.none()
          const reset: StoredTask = {
            ...task,
            runCount: 0,
            lastRunAt: null,
            pendingExecutionId: null,
            updatedAt: movedForward(task.updatedAt, now)
          }
          tables(scheduledTasksTable).set(id, reset)
          softDelete(tables(taskExecutionsTable), id, now)
          softDelete(tables(taskEvaluationsTable), id, now)
          softDelete(tables(taskDailyLogsTable), id, now)
          softDelete(tables(taskNotesTable), id, now)
          return Option.some(recordOf(reset))
        }),
      requestRun: (companyId, id, execution) =>
        store.write((tables) => {
          const task = liveTask(tables, companyId, id)
          if (task === undefined) return Option.none()
          const pending = task.pendingExecutionId === null ? undefined : tables(taskExecutionsTable).get(task.pendingExecutionId)
          if (pending !== undefined) return Option.some(withoutDeletion(pending))
          tables(taskExecutionsTable).set(execution.id, { ...execution, deletedAt: null })
          tables(scheduledTasksTable).set(id, { ...task, pendingExecutionId: execution.id })
          return Option.some(execution)
        }),
      listExecutions: (taskId, window) =>
        store.read((tables) => {
          const page = newestFirstPage(liveRows(tables(taskExecutionsTable).values(), taskId), window)
          const evaluations = liveRows(tables(taskEvaluationsTable).values(), taskId)
          return {
            rows: page.rows.map((execution) => {
              const evaluation = evaluations.find((e) => e.executionId === execution.id)
              return {
                ...withoutDeletion(execution),
                evaluation: evaluation === undefined ? null : withoutDeletion(evaluation)
              }
            }),
            total: page.total
          }
        }),
      addNote: (note) =>
        store.write((tables) => {
          tables(taskNotesTable).set(note.id, { ...note, deletedAt: null })
          return note
        }),
      listNotes: (taskId, window) =>
        store.read((tables) => {
          const page = newestFirstPage(liveRows(tables(taskNotesTable).values(), taskId), window)
          return { rows: page.rows.map(withoutDeletion), total: page.total }
        }),

      claimDue: (now, expiresAt, limit) =>
        store.write((tables) => {
          const token = newId("lease")
          const due = [...tables(scheduledTasksTable).values()]
            .filter((task) => isDue(task, now) && leaseFree(task, now))
            .sort((a, b) => (a.nextRunAt?.getTime() ?? 0) - (b.nextRunAt?.getTime() ?? 0))
            .slice(0, limit)
          return due.map((task) => {
            tables(scheduledTasksTable).set(task.id, { ...task, leaseToken: token, leaseExpiresAt: expiresAt })
            return { task: recordOf(task), token }
          })
        }),
      renewLease: (id, token, expiresAt) =>
        store.write((tables) => {
          const task = tables(scheduledTasksTable).get(id)
          if (task === undefined || task.leaseToken !== token || task.deletedAt !== null) return false
          tables(scheduledTasksTable).set(id, { ...task, leaseExpiresAt: expiresAt })
          return true
        }),
      startExecution: (execution) =>
        store.write((tables) => {
          const previous = execution.trigger === "manual"
            ? tables(taskExecutionsTable).get(execution.id)
            : liveRows(tables(taskExecutionsTable).values(), execution.taskId).find((row) =>
              row.trigger !== "manual" && row.scheduledFor.getTime() === execution.scheduledFor.getTime()
            )
          const started: StoredExecution = previous === undefined
            ? { ...execution, deletedAt: null }
            : { ...previous, status: "running", attempts: previous.attempts + 1, startedAt: execution.startedAt }
          tables(taskExecutionsTable).set(started.id, started)
          return withoutDeletion(started)
        }),
      pendingInputs: (taskId) =>
        store.read((tables) =>
          liveRows(tables(taskNotesTable).values(), taskId)
            .filter((note) => note.kind === "input" && note.processedAt === null)
            .sort((a, b) => a.id.localeCompare(b.id))
            .map(withoutDeletion)
        ),
      dailyLog: (taskId, day) =>
        store.read((tables) =>
          Option.map(
            Option.fromNullishOr(
              [...tables(taskDailyLogsTable).values()].find((log) =>
                log.taskId === taskId && log.day === day && log.deletedAt === null
              )
            ),
            ({ updatedAt: _, ...log }) => withoutDeletion(log)
          )
        ),
      lastRunCredits: (taskId) =>
        store.read((tables) =>
          liveRows(tables(taskExecutionsTable).values(), taskId)
            .filter((execution) => execution.status === "succeeded")
            .sort((a, b) => (b.finishedAt?.getTime() ?? 0) - (a.finishedAt?.getTime() ?? 0))[0]?.credits ?? 0
        ),

      atomically: (effect) => Effect.uninterruptible(effect),
      lockClaimed: (id, token) =>
        store.read((tables) => {
          const task = tables(scheduledTasksTable).get(id)
          return task !== undefined && task.leaseToken === token && task.deletedAt === null
            ? Option.some(recordOf(task))
            : Option.none()
        }),
      finishExecution: (id, result) =>
        store.write((tables) => {
          const execution = tables(taskExecutionsTable).get(id)
          if (execution !== undefined) tables(taskExecutionsTable).set(id, { ...execution, ...result })
        }),
      addEvaluation: (evaluation) =>
        store.write((tables) => void tables(taskEvaluationsTable).set(evaluation.id, { ...evaluation, deletedAt: null })),
      recordDay: (taskId, day, increment, now) =>
        store.write((tables) => {
          const key = [...tables(taskDailyLogsTable).entries()].find(([, log]) =>
            log.taskId === taskId && log.day === day && log.deletedAt === null
          )?.[0]
          const log = key === undefined ? undefined : tables(taskDailyLogsTable).get(key)
          tables(taskDailyLogsTable).set(key ?? newId("day"), {
            taskId,
            day,
            runs: (log?.runs ?? 0) + increment.runs,
            failures: (log?.failures ?? 0) + increment.failures,
            checkIns: (log?.checkIns ?? 0) + increment.checkIns,
            credits: (log?.credits ?? 0) + increment.credits,
            inputTokens: (log?.inputTokens ?? 0) + increment.inputTokens,
            outputTokens: (log?.outputTokens ?? 0) + increment.outputTokens,
            stoppedReason: increment.stoppedReason ?? log?.stoppedReason ?? null,
            updatedAt: now,
            deletedAt: null
          })
        }),
      consumeInputs: (noteIds, executionId, now) =>
        store.write((tables) => {
          for (const id of noteIds) {
            const note = tables(taskNotesTable).get(id)
            if (note !== undefined) tables(taskNotesTable).set(id, { ...note, processedAt: now, executionId })
          }
        }),
      advance: (id, advance, now) =>
        store.write((tables) => {
          const task = tables(scheduledTasksTable).get(id)
          if (task === undefined) return
          tables(scheduledTasksTable).set(id, {
            ...task,
            runCount: task.runCount + (advance.ran ? 1 : 0),
            lastRunAt: advance.ran ? now : task.lastRunAt,
            nextRunAt: advance.nextRunAt,
            status: advance.status,
            pendingExecutionId: task.pendingExecutionId === advance.handledExecutionId ? null : task.pendingExecutionId,
            leaseToken: null,
            leaseExpiresAt: null
          })
        })
    }
  }))
}

/** The memory backend's rows: the records plus the lease and soft-deletion columns. */
export interface StoredTask extends TaskRecord {
  readonly leaseToken: string | null
  readonly leaseExpiresAt: Date | null
  readonly deletedAt: Date | null
}

export interface StoredExecution extends ExecutionRecord {
  readonly deletedAt: Date | null
}

export interface StoredEvaluation extends EvaluationRecord {
  readonly deletedAt: Date | null
}

export interface StoredNote extends NoteRecord {
  readonly deletedAt: Date | null
}

export interface StoredDailyLog extends DailyLogRecord {
  readonly updatedAt: Date
  readonly deletedAt: Date | null
}

interface TaskRow {
  readonly id: string
  readonly company_id: string
  readonly organization_id: string
  readonly user_id: string | null
  readonly employee_id: string
  readonly name: string
  readonly prompt: string
  readonly schedule_type: ScheduleType
  readonly scheduled_at: Date | null
  readonly recurring_config: RecurringConfig | null
  readonly context_settings: Record<string, unknown>
  readonly timezone: string
  readonly next_run_at: Date | null
  readonly last_run_at: Date | null
  readonly status: TaskStatus
  readonly run_count: unknown
  readonly daily_credit_limit: unknown
  readonly template_id: string | null
  readonly template_version: unknown
  readonly pending_execution_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const dateOrNull = (value: Date | null) => (value === null ? null : new Date(value))
const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : toNumber(value))

const taskFromRow = (row: TaskRow): TaskRecord => ({
  id: row.id,
  companyId: row.company_id,
  organizationId: row.organization_id,
  userId: row.user_id,
  employeeId: row.employee_id,
  name: row.name,
  prompt: row.prompt,
  scheduleType: row.schedule_type,
  scheduledAt: dateOrNull(row.scheduled_at),
  recurringConfig: row.recurring_config,
  contextSettings: row.context_settings,
  timezone: row.timezone,
  nextRunAt: dateOrNull(row.next_run_at),
  lastRunAt: dateOrNull(row.last_run_at),
  status: row.status,
  runCount: toNumber(row.run_count),
  dailyCreditLimit: numberOrNull(row.daily_credit_limit),
  templateId: row.template_id,
  templateVersion: numberOrNull(row.template_version),
  pendingExecutionId: row.pending_execution_id,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

interface ExecutionRow {
  readonly id: string
  readonly task_id: string
  readonly trigger: ExecutionTrigger
  readonly status: ExecutionStatus
  readonly scheduled_for: Date
  readonly attempts: unknown
  readonly model: string
  readonly output: string | null
  readonly error: string | null
  readonly input_tokens: unknown
  readonly output_tokens: unknown
  readonly credits: unknown
  readonly started_at: Date | null
  readonly finished_at: Date | null
  readonly created_at: Date
}

const executionToRow = (execution: ExecutionRecord) => ({
  id: execution.id,
  task_id: execution.taskId,
  trigger: execution.trigger,
  status: execution.status,
  scheduled_for: execution.scheduledFor,
  attempts: execution.attempts,
  model: execution.model,
  output: execution.output,
  error: execution.error,
  input_tokens: execution.inputTokens,
  output_tokens: execution.outputTokens,
  credits: execution.credits,
  started_at: execution.startedAt,
  finished_at: execution.finishedAt,
  created_at: execution.createdAt
})

const executionFromRow = (row: ExecutionRow): ExecutionRecord => ({
  id: row.id,
  taskId: row.task_id,
  trigger: row.trigger,
  status: row.status,
  scheduledFor: new Date(row.scheduled_for),
  attempts: toNumber(row.attempts),
  model: row.model,
  output: row.output,
  error: row.error,
  inputTokens: toNumber(row.input_tokens),
  outputTokens: toNumber(row.output_tokens),
  credits: toNumber(row.credits),
  startedAt: dateOrNull(row.started_at),
  finishedAt: dateOrNull(row.finished_at),
  createdAt: new Date(row.created_at)
})

interface EvaluationRow {
  readonly id: string
  readonly task_id: string
  readonly execution_id: string
  readonly passed: boolean
  readonly score: unknown
  readonly checks: ReadonlyArray<EvaluationCheck>
  readonly created_at: Date
}

const evaluationFromRow = (row: EvaluationRow): EvaluationRecord => ({
  id: row.id,
  taskId: row.task_id,
  executionId: row.execution_id,
  passed: row.passed,
  score: toNumber(row.score),
  checks: row.checks,
  createdAt: new Date(row.created_at)
})

interface DailyLogRow {
  readonly task_id: string
  readonly day: string
  readonly runs: unknown
  readonly failures: unknown
  readonly check_ins: unknown
  readonly credits: unknown
  readonly input_tokens: unknown
  readonly output_tokens: unknown
  readonly stopped_reason: string | null
}

const dailyLogFromRow = (row: DailyLogRow): DailyLogRecord => ({
  taskId: row.task_id,
  day: row.day,
  runs: toNumber(row.runs),
  failures: toNumber(row.failures),
  checkIns: toNumber(row.check_ins),
  credits: toNumber(row.credits),
  inputTokens: toNumber(row.input_tokens),
  outputTokens: toNumber(row.output_tokens),
  stoppedReason: row.stopped_reason
})

interface NoteRow {
  readonly id: string
  readonly task_id: string
  readonly kind: NoteKind
  readonly content: string
  readonly execution_id: string | null
  readonly processed_at: Date | null
  readonly created_at: Date
}

const noteToRow = (note: NoteRecord) => ({
  id: note.id,
  task_id: note.taskId,
  kind: note.kind,
  content: note.content,
  execution_id: note.executionId,
  processed_at: note.processedAt,
  created_at: note.createdAt
})

const noteFromRow = (row: NoteRow): NoteRecord => ({
  id: row.id,
  taskId: row.task_id,
  kind: row.kind,
  content: row.content,
  executionId: row.execution_id,
  processedAt: dateOrNull(row.processed_at),
  createdAt: new Date(row.created_at)
})
