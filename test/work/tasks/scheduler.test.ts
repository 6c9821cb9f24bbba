import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { LlmError, type LlmRequest } from "../../../src/models/llm/Llm.ts"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { handleClaim } from "../../../src/work/tasks/TaskRunner.ts"
import type { NewScheduledTask } from "../../../src/work/tasks/Api.ts"
import { newExecution } from "../../../src/work/tasks/TaskRecords.ts"
import { TasksRepo } from "../../../src/work/tasks/TasksRepo.ts"
import { spend } from "../../support/Billing.ts"
import { schedulerTestServer, testLeaseMs } from "../../support/SchedulerTest.ts"
import { LlmCalls } from "../../support/ScriptedLlm.ts"
import { client, pgliteStorage, seedTenant } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

const at = (iso: string) => TestClock.setTime(Date.parse(iso))
const minutes = (n: number) => n * 60_000

/** A tenant with an employee, and its typed client (company key). */
const setup = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const api = yield* client({ apiKey: tenant.apiKey })
  const employee = yield* api.employees.create({
    payload: { name: "Ada", role: "a research analyst", instructions: "Cite your sources." }
  })
  /** A task of the employee's; `name` and `prompt` default to placeholders. */
  const createTask = (
    payload: Omit<typeof NewScheduledTask.Type, "employeeId" | "name" | "prompt"> & { name?: string; prompt?: string }
  ) => api.scheduledTasks.create({ payload: { name: "Task", prompt: "Work", ...payload, employeeId: employee.id } })
  const runDue = Scheduler.use((scheduler) => scheduler.runDue)
  const executions = (task_id: string) => Effect.map(api.scheduledTasks.listExecutions({ params: { task_id }, query: {} }), (page) => page.items)
  const task = (task_id: string) => api.scheduledTasks.get({ params: { task_id } })
  const usage = usageHistory(tenant.organizationId)
  return { tenant, api, createTask, runDue, executions, task, usage }
})

/** Prompts containing FAIL make the model call fail. */
const failOnDemand = {
  reply: (request: LlmRequest) =>
    JSON.stringify(request.messages).includes("FAIL")
      ? new LlmError({ kind: "upstream", message: "upstream unavailable" })
      : undefined
}

/** Each test gets its own service and storage, so that other tests' tasks never fall due in it. */
const isolated = <A, E, R>(test: Effect.Effect<A, E, R>) =>
  Effect.provide(test, schedulerTestServer(pgliteStorage, failOnDemand), { local: true })

describe("scheduler", () => {
  it.effect("a one-time task runs once at its time as its employee, is billed and completes", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T08:00:00Z")
      const { tenant, createTask, runDue, executions, task, usage } = yield* setup
      const created = yield* createTask({
        name: "Weekly digest",
        prompt: "Summarise the week",
        scheduleType: "one_time",
        scheduledAt: new Date("2026-05-04T08:10:00Z")
      })
      expect(created).toMatchObject({ status: "active", runCount: 0, lastRunAt: null, timezone: "UTC" })
      expect(created.nextRunAt).toEqual(new Date("2026-05-04T08:10:00Z"))

      expect(yield* runDue).toBe(0)
      yield* at("2026-05-04T08:10:00Z")
      expect(yield* runDue).toBe(1)

      const done = yield* task(created.id)
      expect(done).toMatchObject({ status: "completed", runCount: 1, nextRunAt: null })
      expect(done.lastRunAt).toEqual(new Date("2026-05-04T08:10:00Z"))
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({
        trigger: "scheduled",
        status: "succeeded",
        attempts: 1,
        model: "balanced",
        output: "Done: Summarise the week",
        error: null,
        inputTokens: 1_500,
        outputTokens: 500,
        credits: 2,
        durationMs: 0
      })
      expect(execution.scheduledFor).toEqual(new Date("2026-05-04T08:10:00Z"))
      expect(execution.evaluation).toMatchObject({ passed: true, score: 1 })
      expect(execution.evaluation?.checks.map((check) => check.name)).toEqual([
        "completed",
        "has_output",
        "complete_answer",
        "within_daily_limit"
      ])

      const [request] = yield* LlmCalls.use((calls) => calls.requests).pipe(Effect.map((all) => all.slice(-1)))
      expect(request.system).toBe("You are Ada, a research analyst.\n\nYour instructions:\nCite your sources.")
      const billed = yield* usage
      expect(billed.events).toHaveLength(1)
      expect(billed.events[0]).toMatchObject({
        feature: "tasks",
        model: "balanced",
        credits: 2,
        inputTokens: 1_500,
        outputTokens: 500,
        companyId: tenant.companyId,
        // The task was made with the company key: it runs for the key's creator.
        userId: tenant.userId
      })

      yield* at("2026-05-05T08:10:00Z")
      expect(yield* runDue).toBe(0)
      expect(yield* executions(created.id)).toHaveLength(1)
    })))

  it.effect("a cron task follows local time across a DST change", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-03-06T15:00:00Z")
      const { createTask, runDue, task } = yield* setup
      const created = yield* createTask({
        name: "Morning brief",
        prompt: "Brief me",
        scheduleType: "recurring",
        recurringConfig: { cron: "0 9 * * *" },
        timezone: "America/New_York"
      })
      // 09:00 EST is 14:00Z; New York moves to EDT on 8 March, when 09:00 is 13:00Z.
      expect(created.nextRunAt).toEqual(new Date("2026-03-07T14:00:00Z"))
      yield* at("2026-03-07T14:00:00Z")
      expect(yield* runDue).toBe(1)
      expect((yield* task(created.id)).nextRunAt).toEqual(new Date("2026-03-08T13:00:00Z"))
      yield* at("2026-03-08T13:00:00Z")
      expect(yield* runDue).toBe(1)
      const after = yield* task(created.id)
      expect(after).toMatchObject({ status: "active", runCount: 2 })
      expect(after.nextRunAt).toEqual(new Date("2026-03-09T13:00:00Z"))
    })))

  it.effect("missed occurrences after downtime run once, not once per missed slot", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T10:00:00Z")
      const { createTask, runDue, executions, task } = yield* setup
      const created = yield* createTask({
        name: "Poll",
        prompt: "Check",
        scheduleType: "recurring",
        recurringConfig: { intervalMinutes: 10 }
      })
      expect(created.nextRunAt).toEqual(new Date("2026-05-04T10:10:00Z"))
      yield* at("2026-05-04T12:05:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* runDue).toBe(0)
      expect(yield* executions(created.id)).toHaveLength(1)
      const after = yield* task(created.id)
      expect(after.runCount).toBe(1)
      // The interval grid keeps its cadence: 10:10 + 12 × 10 minutes.
      expect(after.nextRunAt).toEqual(new Date("2026-05-04T12:10:00Z"))
    })))

  it.effect("a heartbeat checks in for free and runs the prompt only when notes are due", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { api, createTask, runDue, executions, task, usage } = yield* setup
      const created = yield* createTask({
        name: "Inbox watch",
        prompt: "Handle what is new",
        scheduleType: "heartbeat",
        recurringConfig: { intervalMinutes: 15 }
      })
      const notes = () => Effect.map(api.scheduledTasks.listNotes({ params: { task_id: created.id }, query: {} }), (p) => p.items)
      const calls = LlmCalls.use((llm) => Effect.map(llm.requests, (all) => all.length))
      const callsBefore = yield* calls

      yield* at("2026-05-04T09:15:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* calls).toBe(callsBefore)
      expect(yield* executions(created.id)).toEqual([])
      expect((yield* usage).events).toEqual([])
      expect((yield* notes()).map((note) => [note.kind, note.content])).toEqual([["heartbeat", "Checked in: nothing due"]])
      const quiet = yield* task(created.id)
      expect(quiet).toMatchObject({ runCount: 0, lastRunAt: null })
      expect(quiet.nextRunAt).toEqual(new Date("2026-05-04T09:30:00Z"))

      const input = yield* api.scheduledTasks.addNote({
        params: { task_id: created.id },
        payload: { content: "New lead: ACME" }
      })
      expect(input).toMatchObject({ kind: "input", processedAt: null })
      yield* at("2026-05-04T09:30:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* calls).toBe(callsBefore + 1)
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({ trigger: "heartbeat", status: "succeeded", credits: 2 })
      expect(execution.output).toBe("Done: Handle what is new\n\nNotes left for this run:\n- New lead: ACME")
      const afterRun = yield* notes()
      expect(afterRun[0]).toMatchObject({ kind: "heartbeat", executionId: execution.id })
      expect(afterRun.find((note) => note.id === input.id)).toMatchObject({ executionId: execution.id })
      expect(afterRun.find((note) => note.id === input.id)?.processedAt).toEqual(new Date("2026-05-04T09:30:00Z"))
      expect((yield* usage).events).toHaveLength(1)

      yield* at("2026-05-04T09:45:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* calls).toBe(callsBefore + 1)
      expect((yield* task(created.id)).runCount).toBe(1)
    })))

  it.effect("a paused task does not run; resuming schedules it from now", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { api, createTask, runDue, executions } = yield* setup
      const created = yield* createTask({
        name: "Poll",
        prompt: "Check",
        scheduleType: "recurring",
        recurringConfig: { intervalMinutes: 10 }
      })
      const params = { task_id: created.id }
      const paused = yield* api.scheduledTasks.pause({ params, payload: null })
      expect(paused).toMatchObject({ status: "paused", nextRunAt: null })
      expect(yield* api.scheduledTasks.pause({ params, payload: {} })).toEqual(paused)
      yield* at("2026-05-04T11:00:00Z")
      expect(yield* runDue).toBe(0)
      const resumed = yield* api.scheduledTasks.resume({ params, payload: null })
      expect(resumed.status).toBe("active")
      expect(resumed.nextRunAt).toEqual(new Date("2026-05-04T11:10:00Z"))
      yield* at("2026-05-04T11:10:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* executions(created.id)).toHaveLength(1)
    })))

  it.effect("the daily credit limit stops the task for the day, with the reason recorded", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T00:00:00Z")
      const { api, createTask, runDue, executions, task } = yield* setup
      const created = yield* createTask({
        name: "Hourly",
        prompt: "Work",
        scheduleType: "recurring",
        recurringConfig: { intervalMinutes: 60 },
        dailyCreditLimit: 5
      })
      // Each run costs 2 credits: two runs spend 4, a third would reach 6.
      for (const hour of ["01", "02", "03"]) {
        yield* at(`2026-05-04T${hour}:00:00Z`)
        expect(yield* runDue).toBe(1)
      }
      expect(yield* executions(created.id)).toHaveLength(2)
      const stopped = yield* task(created.id)
      expect(stopped).toMatchObject({ status: "active", runCount: 2 })
      expect(stopped.nextRunAt).toEqual(new Date("2026-05-05T00:00:00Z"))
      const [limitNote] = (yield* api.scheduledTasks.listNotes({ params: { task_id: created.id }, query: {} })).items
      expect(limitNote.kind).toBe("daily_limit")
      expect(limitNote.content).toContain("Daily credit limit of 5 reached: 4 spent on 2026-05-04")
      const log = yield* TasksRepo.use((repo) => repo.dailyLog(created.id, "2026-05-04"))
      expect(Option.getOrThrow(log)).toMatchObject({ runs: 2, credits: 4, stoppedReason: limitNote.content })

      yield* at("2026-05-04T12:00:00Z")
      expect(yield* runDue).toBe(0)
      yield* at("2026-05-05T00:00:00Z")
      expect(yield* runDue).toBe(1)
      expect(yield* executions(created.id)).toHaveLength(3)
    })))

  it.effect("a requested run is queued once, runs without moving the schedule, and is recorded as manual", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { api, createTask, runDue, executions, task } = yield* setup
      const created = yield* createTask({
        name: "Daily",
        prompt: "Report",
        scheduleType: "recurring",
        recurringConfig: { cron: "0 18 * * *" }
      })
      const params = { task_id: created.id }
      const queued = yield* api.scheduledTasks.run({ params, payload: null })
      expect(queued).toMatchObject({ trigger: "manual", status: "queued", attempts: 0, startedAt: null })
      expect((yield* api.scheduledTasks.run({ params, payload: {} })).id).toBe(queued.id)
      expect(yield* runDue).toBe(1)
      expect(yield* runDue).toBe(0)
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({ id: queued.id, trigger: "manual", status: "succeeded", attempts: 1 })
      const after = yield* task(created.id)
      expect(after).toMatchObject({ runCount: 1, status: "active" })
      expect(after.nextRunAt).toEqual(created.nextRunAt)
    })))

  it.effect("a failing model call records a failed execution and bills nothing", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { createTask, runDue, executions, task, usage } = yield* setup
      const created = yield* createTask({
        name: "Doomed",
        prompt: "FAIL please",
        scheduleType: "recurring",
        recurringConfig: { intervalMinutes: 5 },
        contextSettings: { model: "fastest", maxTokens: 64 }
      })
      yield* at("2026-05-04T09:05:00Z")
      expect(yield* runDue).toBe(1)
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({
        status: "failed",
        model: "fastest",
        error: "Model call failed: upstream unavailable",
        credits: 0,
        output: null
      })
      expect(execution.evaluation).toMatchObject({ passed: false })
      expect((yield* usage).events).toEqual([])
      const after = yield* task(created.id)
      expect(after.runCount).toBe(1)
      expect(after.nextRunAt).toEqual(new Date("2026-05-04T09:10:00Z"))
      const [request] = (yield* LlmCalls.use((calls) => calls.requests)).slice(-1)
      expect(request).toMatchObject({ model: "fastest", maxTokens: 64 })
    })))

  it.effect("a crashed worker's occurrence is retried once its lease expires, and billed once", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { createTask, runDue, executions, task, usage } = yield* setup
      const created = yield* createTask({
        name: "Once",
        prompt: "Do it",
        scheduleType: "one_time",
        scheduledAt: new Date("2026-05-04T09:00:00Z")
      })
      const repo = yield* TasksRepo
      // A worker claims the task, starts the execution and dies before recording anything.
      const now = new Date("2026-05-04T09:00:00Z")
      const [crashed] = yield* repo.claimDue(now, new Date(now.getTime() + testLeaseMs), 100)
      expect(crashed.task.id).toBe(created.id)
      yield* repo.startExecution(newExecution({
        id: "exe_crashed",
        taskId: created.id,
        trigger: "scheduled",
        status: "running",
        scheduledFor: now,
        attempts: 1,
        startedAt: now,
        createdAt: now
      }))

      yield* TestClock.adjust(minutes(0.5))
      expect(yield* runDue).toBe(0)
      yield* TestClock.adjust(testLeaseMs)
      expect(yield* runDue).toBe(1)
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({ id: "exe_crashed", status: "succeeded", attempts: 2 })
      expect(yield* executions(created.id)).toHaveLength(1)
      expect((yield* task(created.id))).toMatchObject({ status: "completed", runCount: 1 })
      expect((yield* usage).events).toHaveLength(1)

      // The crashed worker coming back cannot record or bill: its lease is gone.
      expect(yield* handleClaim(crashed)).toBe(false)
      expect(yield* executions(created.id)).toHaveLength(1)
      expect((yield* usage).events).toHaveLength(1)
      expect((yield* task(created.id)).runCount).toBe(1)
    })))

  it.effect("an organization out of credits gets a failed run and no charge", () =>
    isolated(Effect.gen(function*() {
      yield* at("2026-05-04T09:00:00Z")
      const { tenant, createTask, runDue, executions, usage } = yield* setup
      const organization = Option.getOrThrow(yield* settledOrganization(tenant.organizationId))
      const spendable = organization.creditLimit - organization.creditUsage
      yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }, {
        feature: "chat",
        credits: spendable
      })
      const created = yield* createTask({
        name: "Broke",
        prompt: "Work",
        scheduleType: "one_time",
        scheduledAt: new Date("2026-05-04T09:00:00Z")
      })
      expect(yield* runDue).toBe(1)
      const [execution] = yield* executions(created.id)
      expect(execution).toMatchObject({ status: "failed", error: "Insufficient credits", credits: 0 })
      expect((yield* usage).events).toHaveLength(1)
    })))
})
