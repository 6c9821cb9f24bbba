import { Effect, Layer, Option } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { jsonParam, toNumber } from "../storage/Rows.ts"
import { selectPage } from "../storage/Windows.ts"
import {
  dailyLogFromRow,
  type DailyLogRow,
  evaluationFromRow,
  type EvaluationRow,
  executionFromRow,
  type ExecutionRow,
  executionToRow,
  noteFromRow,
  type NoteRow,
  noteToRow,
  taskFromRow,
  type TaskRow
} from "./TaskRows.ts"
import { TasksRepo } from "./TasksRepo.ts"

/** The repository on PostgreSQL or PGlite. */
export const tasksRepoSql = Layer.effect(TasksRepo, Effect.gen(function*() {
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
