import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { SchedulerConfig } from "../../../src/work/tasks/SchedulerConfig.ts"
import { onLiveClock, testLeaseMs } from "../../support/SchedulerTest.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * Scheduled tasks run through the agent loop with the tools their
 * `contextSettings.tools` name, as the task's user, on the offline model:
 * a question is answered from the knowledge base, every round billed under
 * `tasks`; a task without tools is offered none.
 */

const server = <A, E>(storage: Layer.Layer<A, E>) =>
  Scheduler.layer.pipe(
    Layer.provideMerge(SchedulerConfig.layerWith({ enabled: false, leaseMs: testLeaseMs })),
    Layer.provideMerge(testServer(onLiveClock(storage)))
  )

describe.each(backends)("scheduled tasks with tools on $name", ({ storage }) => {
  it.layer(server(storage), { timeout: 60_000 })("the offline model", (it) => {
    it.effect("a task with search_knowledge answers from the documents, cited; one without tools does not search", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-05-04T08:00:00Z"))
        const tenant = yield* seedTenant("task-tools")
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* api.knowledge.create({
          payload: { title: "Refund policy", content: "# Refunds\n\nCustomers may return any product within 30 days of delivery." }
        })
        const employee = yield* api.employees.create({ payload: { name: "Ada", role: "support lead" } })
        const create = (name: string, tools?: ReadonlyArray<"search_knowledge">) =>
          api.scheduledTasks.create({
            payload: {
              name,
              prompt: "How many days do customers have to return a product?",
              scheduleType: "one_time",
              scheduledAt: new Date("2026-05-04T08:10:00Z"),
              employeeId: employee.id,
              ...(tools === undefined ? {} : { contextSettings: { tools } })
            }
          })
        const withTools = yield* create("With tools", ["search_knowledge"])
        const without = yield* create("Without tools")
        yield* TestClock.adjust("10 minutes")
        expect(yield* Scheduler.use((scheduler) => scheduler.runDue)).toBe(2)

        const [answered] = (yield* api.scheduledTasks.listExecutions({ params: { task_id: withTools.id }, query: {} })).items
        expect(answered).toMatchObject({ status: "succeeded" })
        expect(answered!.output).toContain("within 30 days of delivery")
        expect(answered!.output).toContain("(Refund policy)")
        const [plain] = (yield* api.scheduledTasks.listExecutions({ params: { task_id: without.id }, query: {} })).items
        expect(plain).toMatchObject({ status: "succeeded" })
        expect(plain!.output).not.toContain("30 days")

        const charges = (yield* usageHistory(tenant.organizationId, { featureKey: "tasks" })).events
        // Two rounds (search, answer) for the task with tools, one for the other.
        expect(charges).toHaveLength(3)
        expect(answered!.credits + plain!.credits).toBe(charges.reduce((sum, charge) => sum + charge.credits, 0))
      }))
  })
})
