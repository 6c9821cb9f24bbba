import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { schedulerTestServer } from "../../support/SchedulerTest.ts"
import { LlmCalls } from "../../support/ScriptedLlm.ts"
import { client, pgliteStorage, seedTenant } from "../../support/TestServer.ts"

/** A department's instructions join the system prompt of its employees' scheduled runs, as changed at run time. */

it.effect("a scheduled run of a department's employee carries the department's part of the prompt", () =>
  Effect.provide(
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-05-04T08:00:00Z"))
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const research = yield* api.departments.create({ payload: { name: "Research", instructions: "Always cite two sources." } })
      const employee = yield* api.employees.create({
        payload: { name: "Ada", role: "a research analyst", instructions: "Be brief.", departmentId: research.id }
      })
      yield* api.departments.update({ params: { departmentId: research.id }, payload: { instructions: "Always cite three sources." } })
      yield* api.scheduledTasks.create({
        payload: { name: "Digest", prompt: "Summarise", scheduleType: "one_time", scheduledAt: new Date("2026-05-04T08:10:00Z"), employeeId: employee.id }
      })
      yield* TestClock.setTime(Date.parse("2026-05-04T08:10:00Z"))
      expect(yield* Scheduler.use((scheduler) => scheduler.runDue)).toBe(1)
      const [request] = (yield* LlmCalls.use((calls) => calls.requests)).slice(-1)
      expect(request!.system).toBe(
        "You are Ada, a research analyst.\n\nYour instructions:\nBe brief.\n\nYou work in the Research department.\nThe department's instructions:\nAlways cite three sources."
      )
    }),
    schedulerTestServer(pgliteStorage),
    { local: true }
  ))
