import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { EmployeesRepo } from "../../../src/work/agents/EmployeesRepo.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { emptyDay, newExecution, type TaskRecord } from "../../../src/work/tasks/TaskRecords.ts"
import { TasksRepo } from "../../../src/work/tasks/TasksRepo.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")
const plus = (date: Date, ms: number) => new Date(date.getTime() + ms)
const lease = 60_000

/** A company with an employee, and a maker of tasks due at `t0` unless told otherwise. */
const fixture = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const employee = yield* EmployeesRepo.use((repo) =>
    repo.create({
      id: newId("emp"),
      companyId: tenant.companyId,
      name: "Ada",
      role: "analyst",
      instructions: "",
      model: null,
      departmentId: null,
      createdAt: t0,
      updatedAt: t0
    })
  )
  const repo = yield* TasksRepo
  const createTask = (overrides: Partial<TaskRecord> = {}) =>
    repo.create({
      id: newId("tsk"),
      companyId: tenant.companyId,
      organizationId: tenant.organizationId,
      userId: null,
      employeeId: employee.id,
      name: "Task",
      prompt: "Work",
      scheduleType: "recurring",
      scheduledAt: null,
      recurringConfig: { intervalMinutes: 10 },
      contextSettings: { nested: { list: [1, 2] } },
      timezone: "UTC",
      nextRunAt: t0,
      lastRunAt: null,
      status: "active",
      runCount: 0,
      dailyCreditLimit: null,
      templateId: null,
      templateVersion: null,
      pendingExecutionId: null,
      createdAt: t0,
      updatedAt: t0,
      ...overrides
    })
  return { tenant, repo, createTask }
})

for (const backend of backends) {
  it.layer(backend.storage)(`TasksRepo contract on ${backend.name}`, (it) => {
    it.effect("stores and reads back every field", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const created = yield* createTask({ dailyCreditLimit: 7, timezone: "Europe/Berlin" })
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, created.id))).toEqual(created)
        expect(Option.isNone(yield* repo.get("cmp_other", created.id))).toBe(true)
      }))

    it.effect("concurrent claims never share a task, and a lease holds until it expires", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const ids = (yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
          createTask({ nextRunAt: plus(t0, -i) }))).map((task) => task.id)
        yield* createTask({ nextRunAt: plus(t0, 100 * lease) })
        yield* createTask({ status: "paused", nextRunAt: null })
        const mine = (claims: ReadonlyArray<{ readonly task: TaskRecord }>) =>
          claims.filter((claim) => claim.task.companyId === tenant.companyId).map((claim) => claim.task.id)

        const [first, second] = yield* Effect.all(
          [repo.claimDue(t0, plus(t0, lease), 1_000), repo.claimDue(t0, plus(t0, lease), 1_000)],
          { concurrency: 2 }
        )
        const claimed = [...mine(first), ...mine(second)]
        expect(claimed.toSorted()).toEqual(ids.toSorted())
        expect(mine(yield* repo.claimDue(plus(t0, lease - 1), plus(t0, 2 * lease), 1_000))).toEqual([])
        const retaken = mine(yield* repo.claimDue(plus(t0, lease), plus(t0, 2 * lease), 1_000))
        expect(retaken.toSorted()).toEqual(ids.toSorted())
      }))

    it.effect("a lease taken over cannot be renewed or recorded by its former holder", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const task = yield* createTask()
        const claimOf = (claims: ReadonlyArray<{ readonly task: TaskRecord; readonly token: string }>) =>
          claims.find((claim) => claim.task.id === task.id)!
        const stale = claimOf(yield* repo.claimDue(t0, plus(t0, lease), 1_000))
        expect(yield* repo.renewLease(task.id, stale.token, plus(t0, 2 * lease))).toBe(true)
        expect(yield* repo.isLeased(task.id, plus(t0, lease))).toBe(true)
        const fresh = claimOf(yield* repo.claimDue(plus(t0, 2 * lease), plus(t0, 3 * lease), 1_000))
        expect(yield* repo.renewLease(task.id, stale.token, plus(t0, 4 * lease))).toBe(false)
        expect(Option.isNone(yield* repo.lockClaimed(task.id, stale.token))).toBe(true)
        expect(Option.isSome(yield* repo.lockClaimed(task.id, fresh.token))).toBe(true)
        yield* repo.advance(task.id, { ran: true, nextRunAt: plus(t0, 600_000), status: "active", handledExecutionId: null }, t0)
        expect(yield* repo.isLeased(task.id, plus(t0, 2 * lease))).toBe(false)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, task.id))).toMatchObject({ runCount: 1, lastRunAt: t0 })
      }))

    it.effect("a retried occurrence continues its execution row", () =>
      Effect.gen(function*() {
        const { repo, createTask } = yield* fixture
        const task = yield* createTask()
        const execution = (id: string, startedAt: Date) =>
          newExecution({ id, taskId: task.id, trigger: "scheduled", status: "running", scheduledFor: t0, attempts: 1, startedAt, createdAt: startedAt })
        const first = yield* repo.startExecution(execution("exe_a", t0))
        const retry = yield* repo.startExecution(execution("exe_b", plus(t0, lease)))
        expect(retry).toMatchObject({ id: first.id, attempts: 2, startedAt: plus(t0, lease) })
        expect((yield* repo.listExecutions(task.id, { offset: 0, limit: 10 })).total).toBe(1)
      }))

    it.effect("a requested run is queued once and makes even a paused task due", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const task = yield* createTask({ status: "paused", nextRunAt: null })
        const queued = (id: string) =>
          newExecution({ id, taskId: task.id, trigger: "manual", status: "queued", scheduledFor: t0, attempts: 0, startedAt: null, createdAt: t0 })
        const first = Option.getOrThrow(yield* repo.requestRun(tenant.companyId, task.id, queued(newId("exe"))))
        const second = Option.getOrThrow(yield* repo.requestRun(tenant.companyId, task.id, queued(newId("exe"))))
        expect(second.id).toBe(first.id)
        expect(Option.isNone(yield* repo.requestRun("cmp_other", task.id, queued(newId("exe"))))).toBe(true)
        const claims = yield* repo.claimDue(t0, plus(t0, lease), 1_000)
        const claim = claims.find((c) => c.task.id === task.id)!
        expect(claim.task.pendingExecutionId).toBe(first.id)
        yield* repo.advance(task.id, { ran: true, nextRunAt: null, status: "paused", handledExecutionId: first.id }, t0)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, task.id)).pendingExecutionId).toBeNull()
      }))

    it.effect("daily logs add up per local day and keep why the task stopped", () =>
      Effect.gen(function*() {
        const { repo, createTask } = yield* fixture
        const task = yield* createTask()
        yield* repo.recordDay(task.id, "2026-06-01", { ...emptyDay, runs: 1, credits: 3, inputTokens: 10 }, t0)
        yield* repo.recordDay(task.id, "2026-06-01", { ...emptyDay, stoppedReason: "limit" }, t0)
        yield* repo.recordDay(task.id, "2026-06-01", { ...emptyDay, runs: 1, credits: 2, checkIns: 1 }, t0)
        yield* repo.recordDay(task.id, "2026-06-02", { ...emptyDay, runs: 1 }, t0)
        expect(Option.getOrThrow(yield* repo.dailyLog(task.id, "2026-06-01"))).toEqual({
          taskId: task.id,
          day: "2026-06-01",
          runs: 2,
          failures: 0,
          checkIns: 1,
          credits: 5,
          inputTokens: 10,
          outputTokens: 0,
          stoppedReason: "limit"
        })
      }))

    it.effect("reset soft-deletes the history and zeroes the counters; delete hides the task", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const task = yield* createTask()
        const started = yield* repo.startExecution(
          newExecution({ id: newId("exe"), taskId: task.id, trigger: "scheduled", status: "running", scheduledFor: t0, attempts: 1, startedAt: t0, createdAt: t0 })
        )
        yield* repo.addEvaluation({ id: newId("eval"), taskId: task.id, executionId: started.id, passed: true, score: 1, checks: [], createdAt: t0 })
        yield* repo.addNote({ id: newId("note"), taskId: task.id, kind: "input", content: "x", executionId: null, processedAt: null, createdAt: t0 })
        yield* repo.recordDay(task.id, "2026-06-01", { ...emptyDay, runs: 1 }, t0)
        yield* repo.advance(task.id, { ran: true, nextRunAt: plus(t0, 600_000), status: "active", handledExecutionId: null }, t0)

        const reset = Option.getOrThrow(yield* repo.reset(tenant.companyId, task.id, plus(t0, 1)))
        expect(reset).toMatchObject({ runCount: 0, lastRunAt: null, nextRunAt: plus(t0, 600_000), status: "active" })
        expect((yield* repo.listExecutions(task.id, { offset: 0, limit: 10 })).total).toBe(0)
        expect((yield* repo.listNotes(task.id, { offset: 0, limit: 10 })).total).toBe(0)
        expect(yield* repo.pendingInputs(task.id)).toEqual([])
        expect(Option.isNone(yield* repo.dailyLog(task.id, "2026-06-01"))).toBe(true)
        expect(yield* repo.lastRunCredits(task.id)).toBe(0)

        expect(yield* repo.remove(tenant.companyId, task.id, t0)).toBe(true)
        expect(Option.isNone(yield* repo.get(tenant.companyId, task.id))).toBe(true)
        expect(yield* repo.remove(tenant.companyId, task.id, t0)).toBe(false)
        const claims = yield* repo.claimDue(plus(t0, 3_600_000), plus(t0, 3_700_000), 1_000)
        expect(claims.map((claim) => claim.task.id)).not.toContain(task.id)
      }))

    it.effect("a failure inside atomically leaves nothing written", () =>
      Effect.gen(function*() {
        const { tenant, repo, createTask } = yield* fixture
        const task = yield* createTask()
        const failed = yield* Effect.flip(repo.atomically(Effect.gen(function*() {
          yield* repo.advance(task.id, { ran: true, nextRunAt: null, status: "completed", handledExecutionId: null }, t0)
          return yield* Effect.fail("crash" as const)
        })))
        expect(failed).toBe("crash")
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, task.id))).toMatchObject({ runCount: 0, status: "active" })
      }))
  })
}
