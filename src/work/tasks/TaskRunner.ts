import { Effect, Option } from "effect"
import { type EmployeeRecord, EmployeesRepo } from "../agents/EmployeesRepo.ts"
import { departmentPrompt } from "../departments/Departments.ts"
import { employeePersona, systemPrompt as employeePrompt } from "../agents/Prompts.ts"
import { prompt, type StopReason } from "../../models/llm/Llm.ts"
import { newId } from "../../platform/Ids.ts"
import { currentDate } from "../../platform/Time.ts"
import { emit } from "../../storage/Outbox.ts"
import type { Payer } from "../../accounts/usage/Credits.ts"
import { firstRunNextDay, localDay, occurrenceAfter, startOfNextDay } from "./Occurrences.ts"
import { SchedulerConfig } from "./SchedulerConfig.ts"
import {
  type Claim,
  type DayIncrement,
  emptyDay,
  type EvaluationCheck,
  type ExecutionResult,
  newExecution,
  type NoteKind,
  type NoteRecord,
  type TaskRecord,
  type TaskStatus
} from "./TaskRecords.ts"
import { TasksRepo } from "./TasksRepo.ts"
import { runTask, toolsOf } from "./TaskAgent.ts"

/**
 * What a worker does with one claimed task: a heartbeat check-in, a stop for
 * the day, or a run of the prompt through the agent loop as the task's employee.
 * Everything a handled occurrence records (execution, evaluation, daily log,
 * notes, credits, the task's counters and next run) is written in one
 * transaction, and only while the claim's lease is still this worker's: a
 * worker that lost its lease writes and bills nothing, and a crash before
 * that transaction leaves the occurrence to be retried once the lease expires.
 */

/** The occurrence a claim stands for: a scheduled one that has come, else a requested (manual) run. */
interface Occurrence {
  readonly scheduled: boolean
  /** The scheduled instant, or the time of handling for a requested run. */
  readonly at: Date
  readonly now: Date
  /** The local day in the task's zone: the daily log's key. */
  readonly day: string
}

const occurrenceOf = (task: TaskRecord, now: Date): Occurrence => {
  const scheduled = task.status === "active" && task.nextRunAt !== null && task.nextRunAt.getTime() <= now.getTime()
  const at = scheduled && task.nextRunAt !== null ? task.nextRunAt : now
  return { scheduled, at, now, day: localDay(now, task.timezone) }
}

/**
 * The task's next state after handling `occurrence`, from its state at
 * recording time (it may have been paused or rescheduled meanwhile): a
 * schedule changed during the run is kept as it is.
 */
const nextState = (
  locked: TaskRecord,
  occurrence: Occurrence,
  ran: boolean,
  following: (task: TaskRecord) => Date | null
): { readonly status: TaskStatus; readonly nextRunAt: Date | null } => {
  if (ran && locked.scheduleType === "one_time") return { status: "completed", nextRunAt: null }
  if (locked.status !== "active") return { status: locked.status, nextRunAt: null }
  const untouched = occurrence.scheduled && locked.nextRunAt?.getTime() === occurrence.at.getTime()
  return { status: "active", nextRunAt: untouched ? following(locked) : locked.nextRunAt }
}

const note = (
  task: TaskRecord,
  kind: NoteKind,
  content: string,
  now: Date,
  executionId: string | null = null
): NoteRecord => ({
  id: newId("note"),
  taskId: task.id,
  kind,
  content,
  executionId,
  processedAt: null,
  createdAt: now
})

/** Records a handled occurrence atomically if `claim` still holds the task's lease; false when it does not. */
const record = <E, R>(claim: Claim, write: (locked: TaskRecord) => Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const repo = yield* TasksRepo
    return yield* repo.atomically(Effect.gen(function*() {
      const locked = yield* repo.lockClaimed(claim.task.id, claim.token)
      if (Option.isNone(locked)) return false
      yield* write(locked.value)
      return true
    }))
  })

/** A heartbeat check-in with nothing due: a note and the next check-in; no model call, nothing billed. */
const checkIn = (claim: Claim, occurrence: Occurrence) =>
  record(claim, (locked) =>
    Effect.gen(function*() {
      const repo = yield* TasksRepo
      yield* repo.addNote(note(locked, "heartbeat", "Checked in: nothing due", occurrence.now))
      yield* repo.recordDay(locked.id, occurrence.day, { ...emptyDay, checkIns: 1 }, occurrence.now)
      const next = nextState(locked, occurrence, false, (task) => occurrenceAfter(task, occurrence.at, occurrence.now))
      yield* repo.advance(locked.id, { ran: false, ...next, handledExecutionId: null }, occurrence.now)
    }))

/**
 * The daily credit limit would be passed: no run today. A scheduled task
 * moves to its first occurrence of the next local day; a requested run fails
 * with the reason.
 */
const stopForDay = (claim: Claim, occurrence: Occurrence, reason: string) =>
  record(claim, (locked) =>
    Effect.gen(function*() {
      const repo = yield* TasksRepo
      yield* repo.addNote(note(locked, "daily_limit", reason, occurrence.now))
      yield* repo.recordDay(locked.id, occurrence.day, { ...emptyDay, stoppedReason: reason }, occurrence.now)
      const requested = occurrence.scheduled ? null : locked.pendingExecutionId
      if (requested !== null) {
        const refused = { ...noUsage, status: "failed" as const, error: reason, finishedAt: occurrence.now }
        yield* repo.finishExecution(requested, refused)
      }
      const next = nextState(locked, occurrence, false, (task) => firstRunNextDay(task, occurrence.at, occurrence.now))
      yield* repo.advance(locked.id, { ran: false, ...next, handledExecutionId: requested }, occurrence.now)
    }))

const noUsage = { model: "", output: null, error: null, inputTokens: 0, outputTokens: 0, credits: 0 }

/** The employee's persona, instructions and department's part, as the system prompt, with guidance for the task's tools. */
const systemPrompt = (employee: EmployeeRecord, task: TaskRecord, department: string) =>
  employeePrompt({
    persona: employeePersona(employee),
    instructions: employee.instructions,
    department: department,
    tools: toolsOf(task)
  })

/** The task's prompt, followed by the notes left for this run. */
const userPrompt = (task: TaskRecord, inputs: ReadonlyArray<NoteRecord>) =>
  inputs.length === 0
    ? task.prompt
    : `${task.prompt}\n\nNotes left for this run:\n${inputs.map((input) => `- ${input.content}`).join("\n")}`

const stringSetting = (task: TaskRecord, key: string) => {
  const value = task.contextSettings[key]
  return typeof value === "string" && value.trim() !== "" ? value : undefined
}

const maxTokensSetting = (task: TaskRecord) => {
  const value = task.contextSettings.maxTokens
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined
}

/** A finished run, or why there was none. */
interface Attempt {
  readonly result: Omit<ExecutionResult, "finishedAt">
  readonly stopReason: StopReason | null
}

const failed = (model: string, error: string): Attempt => ({
  result: { ...noUsage, model, status: "failed", error },
  stopReason: null
})

/**
 * Runs the prompt as the employee through the agent loop (`TaskAgent.ts`)
 * and records the run with `recordAttempt`, which settles the rounds' holds
 * in the recording transaction (`settle`); a run that is not recorded (lease
 * lost) or was interrupted releases them, so it bills nothing.
 */
const attemptRun = <E, R>(
  task: TaskRecord,
  inputs: ReadonlyArray<NoteRecord>,
  payer: Payer,
  recordAttempt: (attempt: Attempt, settle: Effect.Effect<number>) => Effect.Effect<boolean, E, R>
) =>
  Effect.gen(function*() {
    const config = yield* SchedulerConfig
    const unbilled = (attempt: Attempt) => recordAttempt(attempt, Effect.succeed(0))
    const found = yield* EmployeesRepo.use((repo) => repo.get(task.companyId, task.employeeId))
    if (Option.isNone(found)) return yield* unbilled(failed("", `Employee ${task.employeeId} no longer exists`))
    const employee = found.value
    const model = stringSetting(task, "model") ?? employee.model ?? config.defaultModel
    const request = {
      ...prompt(model, userPrompt(task, inputs), systemPrompt(employee, task, yield* departmentPrompt(employee))),
      maxTokens: maxTokensSetting(task)
    }
    return yield* runTask(task, request, payer, (run, settle) =>
      recordAttempt({ result: { ...run, credits: 0 }, stopReason: run.stopReason }, settle))
  })

/** The automatic evaluation of a run: each check is a fact about the execution. */
const evaluate = (attempt: Attempt, limit: number | null, spentBefore: number): ReadonlyArray<EvaluationCheck> => {
  const { result } = attempt
  const spent = spentBefore + result.credits
  return [
    { name: "completed", passed: result.status === "succeeded", detail: result.error ?? "The model answered" },
    {
      name: "has_output",
      passed: (result.output ?? "").trim() !== "",
      detail: (result.output ?? "").trim() === "" ? "The answer is empty" : `${result.output?.length} characters`
    },
    {
      name: "complete_answer",
      passed: result.status === "succeeded" && attempt.stopReason !== "max_tokens",
      detail: attempt.stopReason === "max_tokens"
        ? "The answer was cut off at maxTokens"
        : `Stop reason: ${attempt.stopReason ?? "none"}`
    },
    {
      name: "within_daily_limit",
      passed: limit === null || spent <= limit,
      detail: limit === null ? "No daily limit" : `${spent} of ${limit} daily credits spent`
    }
  ]
}

/** Runs the prompt and records the run. */
const runPrompt = (
  claim: Claim,
  occurrence: Occurrence,
  inputs: ReadonlyArray<NoteRecord>,
  spentToday: number
) =>
  Effect.gen(function*() {
    const repo = yield* TasksRepo
    const task = claim.task
    const heartbeat = occurrence.scheduled && task.scheduleType === "heartbeat"
    const started = yield* repo.startExecution(newExecution({
      id: occurrence.scheduled || task.pendingExecutionId === null ? newId("exe") : task.pendingExecutionId,
      taskId: task.id,
      trigger: occurrence.scheduled ? heartbeat ? "heartbeat" : "scheduled" : "manual",
      status: "running",
      scheduledFor: occurrence.at,
      attempts: 1,
      startedAt: occurrence.now,
      createdAt: occurrence.now
    }))
    const payer: Payer = { organizationId: task.organizationId, companyId: task.companyId, userId: task.userId }
    return yield* attemptRun(task, inputs, payer, (attempt, settle) =>
      record(claim, (locked) =>
        Effect.gen(function*() {
          const finishedAt = yield* currentDate
          const charged = yield* settle
          const billed = { ...attempt, result: { ...attempt.result, credits: charged } }
          const { result } = billed
          const succeeded = result.status === "succeeded"
          const checks = evaluate(billed, locked.dailyCreditLimit, spentToday)
          yield* repo.finishExecution(started.id, { ...result, finishedAt })
          yield* emit(locked.companyId, "task.run_completed", {
            taskId: locked.id,
            executionId: started.id,
            trigger: started.trigger,
            status: result.status,
            error: result.error,
            credits: result.credits,
            finishedAt: finishedAt.toISOString()
          })
          yield* repo.addEvaluation({
            id: newId("eval"),
            taskId: locked.id,
            executionId: started.id,
            passed: checks.every((check) => check.passed),
            score: checks.filter((check) => check.passed).length / checks.length,
            checks,
            createdAt: finishedAt
          })
          const day: DayIncrement = {
            ...emptyDay,
            runs: 1,
            failures: succeeded ? 0 : 1,
            checkIns: heartbeat ? 1 : 0,
            credits: result.credits,
            inputTokens: result.inputTokens,
            outputTokens: result.outputTokens
          }
          yield* repo.recordDay(locked.id, occurrence.day, day, finishedAt)
          if (succeeded) yield* repo.consumeInputs(inputs.map((input) => input.id), started.id, finishedAt)
          if (heartbeat) {
            const content = `Checked in: ${inputs.length} note(s) due; execution ${started.id} ${result.status}`
            yield* repo.addNote(note(locked, "heartbeat", content, finishedAt, started.id))
          }
          const next = nextState(locked, occurrence, true, (task) => occurrenceAfter(task, occurrence.at, finishedAt))
          const handledExecutionId = occurrence.scheduled ? null : started.id
          yield* repo.advance(locked.id, { ran: true, ...next, handledExecutionId }, finishedAt)
        })))
  })

/** Handles one claimed task. False when the lease was lost before recording (nothing was recorded or billed). */
export const handleClaim = Effect.fn("TaskRunner.handleClaim")(function*(claim: Claim) {
  const repo = yield* TasksRepo
  const task = claim.task
  const occurrence = occurrenceOf(task, yield* currentDate)
  const inputs = yield* repo.pendingInputs(task.id)
  if (occurrence.scheduled && task.scheduleType === "heartbeat" && inputs.length === 0) {
    return yield* checkIn(claim, occurrence)
  }
  const limit = task.dailyCreditLimit
  if (limit === null) return yield* runPrompt(claim, occurrence, inputs, 0)
  const spentToday = Option.match(yield* repo.dailyLog(task.id, occurrence.day), {
    onNone: () => 0,
    onSome: (log) => log.credits
  })
  const expectedCredits = Math.max(1, yield* repo.lastRunCredits(task.id))
  if (spentToday + expectedCredits > limit) {
    const resumes = startOfNextDay(occurrence.now, task.timezone).toISOString()
    return yield* stopForDay(
      claim,
      occurrence,
      `Daily credit limit of ${limit} reached: ${spentToday} spent on ${occurrence.day} and a run costs about ` +
        `${expectedCredits}; runs resume from ${resumes}`
    )
  }
  return yield* runPrompt(claim, occurrence, inputs, spentToday)
})
