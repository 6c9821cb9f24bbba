import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { schedulerTestServer } from "../../support/SchedulerTest.ts"
import { backends, client, seedTenant } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

const start = Date.parse("2026-06-01T08:00:00Z")

/** Polls until a poll claims nothing; answers how many tasks this worker claimed. */
const drain = (scheduler: Scheduler["Service"]) =>
  Effect.gen(function*() {
    let claimed = 0
    while (true) {
      const count = yield* scheduler.runDue
      if (count === 0) return claimed
      claimed += count
    }
  })

for (const backend of backends) {
  it.layer(schedulerTestServer(backend.storage, {}, { concurrency: 4 }))(`racing workers on ${backend.name}`, (it) => {
    it.effect("two workers run every due occurrence exactly once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(start)
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const employee = yield* api.employees.create({ payload: { name: "Ada", role: "analyst" } })
        const tasks = yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => i), (i) =>
          api.scheduledTasks.create({
            payload: {
              name: `Task ${i}`,
              prompt: "Work",
              scheduleType: "one_time",
              scheduledAt: new Date(start + 60_000),
              employeeId: employee.id
            }
          }))
        yield* TestClock.setTime(start + 60_000)

        const first = yield* Scheduler
        const second = yield* Effect.provide(Scheduler.use(Effect.succeed), Scheduler.layer, { local: true })
        expect(second).not.toBe(first)
        const [a, b] = yield* Effect.all([drain(first), drain(second)], { concurrency: 2 })
        expect(a + b).toBe(30)

        for (const task of tasks) {
          const params = { task_id: task.id }
          const executions = yield* api.scheduledTasks.listExecutions({ params, query: {} })
          expect(executions.items.map((execution) => [execution.status, execution.attempts])).toEqual([["succeeded", 1]])
          expect(yield* api.scheduledTasks.get({ params })).toMatchObject({ status: "completed", runCount: 1 })
        }
        const usage = yield* usageHistory(tenant.organizationId)
        expect(usage.total).toBe(30)
      }))
  })
}
