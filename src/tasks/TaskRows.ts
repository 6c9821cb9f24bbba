import { toNumber } from "../storage/Rows.ts"
import type { RecurringConfig, ScheduleType } from "./Occurrences.ts"
import type {
  DailyLogRecord,
  EvaluationCheck,
  EvaluationRecord,
  ExecutionRecord,
  ExecutionStatus,
  ExecutionTrigger,
  NoteKind,
  NoteRecord,
  TaskRecord,
  TaskStatus
} from "./TasksRepo.ts"

/** The scheduled-task tables' rows as PostgreSQL and PGlite return them, and their records. */

export interface TaskRow {
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

export const taskFromRow = (row: TaskRow): TaskRecord => ({
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

export interface ExecutionRow {
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

export const executionToRow = (execution: ExecutionRecord) => ({
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

export const executionFromRow = (row: ExecutionRow): ExecutionRecord => ({
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

export interface EvaluationRow {
  readonly id: string
  readonly task_id: string
  readonly execution_id: string
  readonly passed: boolean
  readonly score: unknown
  readonly checks: ReadonlyArray<EvaluationCheck>
  readonly created_at: Date
}

export const evaluationFromRow = (row: EvaluationRow): EvaluationRecord => ({
  id: row.id,
  taskId: row.task_id,
  executionId: row.execution_id,
  passed: row.passed,
  score: toNumber(row.score),
  checks: row.checks,
  createdAt: new Date(row.created_at)
})

export interface DailyLogRow {
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

export const dailyLogFromRow = (row: DailyLogRow): DailyLogRecord => ({
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

export interface NoteRow {
  readonly id: string
  readonly task_id: string
  readonly kind: NoteKind
  readonly content: string
  readonly execution_id: string | null
  readonly processed_at: Date | null
  readonly created_at: Date
}

export const noteToRow = (note: NoteRecord) => ({
  id: note.id,
  task_id: note.taskId,
  kind: note.kind,
  content: note.content,
  execution_id: note.executionId,
  processed_at: note.processedAt,
  created_at: note.createdAt
})

export const noteFromRow = (row: NoteRow): NoteRecord => ({
  id: row.id,
  taskId: row.task_id,
  kind: row.kind,
  content: row.content,
  executionId: row.execution_id,
  processedAt: dateOrNull(row.processed_at),
  createdAt: new Date(row.created_at)
})
