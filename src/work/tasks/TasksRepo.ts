import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { newId } from "../../platform/Ids.ts"
import { readerOf } from "../../storage/Columns.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { jsonParam, toNumber } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"
import {
  type Claim,
  type DailyLogRecord,
  DailyLogRow,
  type DayIncrement,
  type EvaluationRecord,
  EvaluationRow,
  type ExecutionRecord,
  type ExecutionResult,
  ExecutionRow,
  type ExecutionView,
  type NoteRecord,
  NoteRow,
  type TaskAdvance,
  type TaskChange,
  type TaskRecord,
  TaskRow
} from "./TaskRecords.ts"

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

/** Scheduled tasks, their executions, evaluations, daily logs and notes, on PostgreSQL or PGlite. */
export class TasksRepo extends Context.Service<TasksRepo, TasksRepository>()("tasks/TasksRepo") {
  static readonly layer = Layer.effect(TasksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const live = (companyId: string) => sql`company_id = ${companyId} AND deleted_at IS NULL`
    const tasks = readerOf(TaskRow)
    const executions = readerOf(ExecutionRow)
    const evaluations = readerOf(EvaluationRow)
    const notes = readerOf(NoteRow)
    const dailyLogs = readerOf(DailyLogRow)
    const executionColumns = Schema.encodeSync(ExecutionRow)
    const noteColumns = Schema.encodeSync(NoteRow)
    const evaluationColumns = Schema.encodeSync(EvaluationRow)
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
        : evaluations.all(sql`SELECT * FROM task_evaluations
            WHERE ${sql.in("execution_id", executionIds)} AND deleted_at IS NULL`)
    return {
      create: Effect.fn("TasksRepo.create")(function*(task) {
        return yield* tasks.one(sql`
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
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("TasksRepo.get")(function*(companyId, id) {
        return yield* tasks.first(sql`SELECT * FROM scheduled_tasks WHERE ${live(companyId)} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("TasksRepo.list")(function*(companyId, window) {
        return yield* selectRecords(TaskRow, sql, "scheduled_tasks", live(companyId), window)
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
        return yield* tasks.first(sql`
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
          const reset = yield* tasks.first(sql`
            UPDATE scheduled_tasks SET run_count = 0, last_run_at = NULL, pending_execution_id = NULL,
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE ${live(companyId)} AND id = ${id} RETURNING *`)
          if (Option.isSome(reset)) yield* softDeleteHistory(id, now)
          return reset
        }))
      }, Effect.orDie),
      requestRun: Effect.fn("TasksRepo.requestRun")(function*(companyId, id, execution) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const task = yield* tasks.first(
            sql`SELECT * FROM scheduled_tasks WHERE ${live(companyId)} AND id = ${id} FOR UPDATE`
          )
          if (Option.isNone(task)) return Option.none()
          const pending = task.value.pendingExecutionId
          if (pending !== null) {
            return Option.some(yield* executions.one(sql`SELECT * FROM task_executions WHERE id = ${pending}`))
          }
          const inserted = yield* executions.one(
            sql`INSERT INTO task_executions ${sql.insert(executionColumns(execution))} RETURNING *`
          )
          yield* sql`UPDATE scheduled_tasks SET pending_execution_id = ${execution.id} WHERE id = ${id}`
          return Option.some(inserted)
        }))
      }, Effect.orDie),
      listExecutions: Effect.fn("TasksRepo.listExecutions")(function*(taskId, window) {
        const ofTask = sql`task_id = ${taskId} AND deleted_at IS NULL`
        const page = yield* selectRecords(ExecutionRow, sql, "task_executions", ofTask, window)
        const evaluated = yield* evaluationsOf(page.rows.map((execution) => execution.id))
        return {
          rows: page.rows.map((execution) => ({
            ...execution,
            evaluation: evaluated.find((evaluation) => evaluation.executionId === execution.id) ?? null
          })),
          total: page.total
        }
      }, Effect.orDie),
      addNote: Effect.fn("TasksRepo.addNote")(function*(note) {
        return yield* notes.one(sql`INSERT INTO task_notes ${sql.insert(noteColumns(note))} RETURNING *`)
      }, Effect.orDie),
      listNotes: Effect.fn("TasksRepo.listNotes")(function*(taskId, window) {
        return yield* selectRecords(NoteRow, sql, "task_notes", sql`task_id = ${taskId} AND deleted_at IS NULL`, window)
      }, Effect.orDie),

      claimDue: Effect.fn("TasksRepo.claimDue")(function*(now, expiresAt, limit) {
        const token = newId("lease")
        const free = sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
        const claimed = yield* tasks.all(leasedClaim(sql, {
          table: "scheduled_tasks",
          where: sql`deleted_at IS NULL AND ${free}
            AND ((status = 'active' AND next_run_at <= ${now}) OR pending_execution_id IS NOT NULL)`,
          orderBy: sql`next_run_at NULLS FIRST`,
          limit,
          lease: { token, until: expiresAt },
          update: { where: free },
          returning: sql`scheduled_tasks.*`
        }))
        return claimed.map((task) => ({ task, token }))
      }, Effect.orDie),
      renewLease: Effect.fn("TasksRepo.renewLease")(function*(id, token, expiresAt) {
        const rows = yield* sql`UPDATE scheduled_tasks SET lease_expires_at = ${expiresAt}
          WHERE id = ${id} AND lease_token = ${token} AND deleted_at IS NULL RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      startExecution: Effect.fn("TasksRepo.startExecution")(function*(execution) {
        return yield* executions.one(execution.trigger === "manual"
          ? sql`
              UPDATE task_executions SET status = 'running', attempts = attempts + 1, started_at = ${execution.startedAt}
              WHERE id = ${execution.id} RETURNING *`
          : sql`
              INSERT INTO task_executions ${sql.insert(executionColumns(execution))}
              ON CONFLICT (task_id, scheduled_for) WHERE deleted_at IS NULL AND trigger <> 'manual'
              DO UPDATE SET status = 'running', attempts = task_executions.attempts + 1,
                started_at = EXCLUDED.started_at
              RETURNING *`)
      }, Effect.orDie),
      pendingInputs: Effect.fn("TasksRepo.pendingInputs")(function*(taskId) {
        return yield* notes.all(sql`SELECT * FROM task_notes
          WHERE task_id = ${taskId} AND kind = 'input' AND processed_at IS NULL AND deleted_at IS NULL ORDER BY id`)
      }, Effect.orDie),
      dailyLog: Effect.fn("TasksRepo.dailyLog")(function*(taskId, day) {
        return yield* dailyLogs.first(sql`SELECT * FROM task_daily_logs
          WHERE task_id = ${taskId} AND day = ${day} AND deleted_at IS NULL`)
      }, Effect.orDie),
      lastRunCredits: Effect.fn("TasksRepo.lastRunCredits")(function*(taskId) {
        const rows = yield* sql<{ readonly credits: unknown }>`SELECT credits FROM task_executions
          WHERE task_id = ${taskId} AND status = 'succeeded' AND deleted_at IS NULL
          ORDER BY finished_at DESC LIMIT 1`
        return toNumber(rows[0]?.credits)
      }, Effect.orDie),

      atomically: (effect) => sql.withTransaction(effect).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die)),
      lockClaimed: Effect.fn("TasksRepo.lockClaimed")(function*(id, token) {
        return yield* tasks.first(sql`SELECT * FROM scheduled_tasks
          WHERE id = ${id} AND lease_token = ${token} AND deleted_at IS NULL FOR UPDATE`)
      }, Effect.orDie),
      finishExecution: Effect.fn("TasksRepo.finishExecution")(function*(id, result) {
        yield* sql`UPDATE task_executions SET status = ${result.status}, model = ${result.model},
          output = ${result.output}, error = ${result.error}, input_tokens = ${result.inputTokens},
          output_tokens = ${result.outputTokens}, credits = ${result.credits}, finished_at = ${result.finishedAt}
          WHERE id = ${id}`
      }, Effect.orDie),
      addEvaluation: Effect.fn("TasksRepo.addEvaluation")(function*(evaluation) {
        const columns = evaluationColumns(evaluation)
        yield* sql`INSERT INTO task_evaluations ${sql.insert({ ...columns, checks: jsonParam(columns.checks) })}`
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
}
