import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import type { NewScheduledTask } from "../../../src/work/tasks/Api.ts"
import { Scheduler } from "../../../src/work/tasks/Scheduler.ts"
import { TasksRepo } from "../../../src/work/tasks/TasksRepo.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { schedulerTestServer, testLeaseMs } from "../../support/SchedulerTest.ts"
import { addPerson, client, pgliteStorage, seedTenant } from "../../support/TestServer.ts"

const start = Date.parse("2026-06-01T08:00:00Z")
const inAnHour = new Date(start + 3_600_000)

/** A tenant with an employee; `createTask` makes tasks of that employee through the company key. */
const setup = (name = "tenant") =>
  Effect.gen(function*() {
    yield* TestClock.setTime(start)
    const tenant = yield* seedTenant(name)
    const api = yield* client({ apiKey: tenant.apiKey })
    const employee = yield* api.employees.create({ payload: { name: "Ada", role: "analyst" } })
    const createTask = (payload: Partial<typeof NewScheduledTask.Type> = {}) =>
      api.scheduledTasks.create({
        payload: {
          name: "Report",
          prompt: "Write the report",
          scheduleType: "one_time",
          scheduledAt: inAnHour,
          employeeId: employee.id,
          ...payload
        }
      })
    return { tenant, api, employee, createTask }
  })

it.layer(schedulerTestServer(pgliteStorage))("scheduled tasks API", (it) => {
  it.effect("create answers every field of the spec's resource", () =>
    Effect.gen(function*() {
      const { tenant, employee } = yield* setup()
      const api = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      const task = yield* api.scheduledTasks.create({
        payload: {
          name: "Digest",
          prompt: "Summarise",
          scheduleType: "recurring",
          employeeId: employee.id,
          recurringConfig: { cron: "30 7 * * 1-5" },
          timezone: "Europe/Berlin",
          contextSettings: { model: "local-fastest", tools: ["search_knowledge"] },
          dailyCreditLimit: 50
        }
      })
      expect(task).toEqual({
        id: task.id,
        companyId: tenant.companyId,
        userId: tenant.userId,
        employeeId: employee.id,
        name: "Digest",
        prompt: "Summarise",
        scheduleType: "recurring",
        scheduledAt: null,
        recurringConfig: { cron: "30 7 * * 1-5" },
        contextSettings: { model: "local-fastest", tools: ["search_knowledge"] },
        timezone: "Europe/Berlin",
        // 08:00Z on Monday 1 June is past 07:30 in Berlin (CEST, UTC+2): Tuesday's 07:30 comes next.
        nextRunAt: new Date("2026-06-02T05:30:00Z"),
        lastRunAt: null,
        status: "active",
        runCount: 0,
        dailyCreditLimit: 50,
        templateId: null,
        templateVersion: null,
        createdDate: new Date(start),
        updatedDate: new Date(start)
      })
      expect(yield* api.scheduledTasks.get({ params: { task_id: task.id } })).toEqual(task)
      const listed = yield* api.scheduledTasks.list({ query: {} })
      expect(listed).toMatchObject({ total: 1, pages: 1, hasNext: false })
    }))

  it.effect("bad bodies answer 400 naming the field", () =>
    Effect.gen(function*() {
      const { tenant, employee } = yield* setup()
      const base = { name: "x", prompt: "y", employeeId: employee.id }
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ ...base, scheduleType: "weekly" }, "scheduleType"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { intervalMinutes: 5 }, timezone: "Mars/Olympus" }, "timezone"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { intervalMinutes: 5 }, timezone: "+02:00" }, "timezone"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { cron: "* * *" } }, "recurringConfig.cron"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { cron: "0 0 * * * *" } }, "recurringConfig.cron"],
        [{ ...base, scheduleType: "recurring", recurringConfig: {} }, "recurringConfig"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { cron: "0 9 * * *", intervalMinutes: 5 } }, "recurringConfig"],
        [{ ...base, scheduleType: "heartbeat", recurringConfig: { intervalMinutes: 0 } }, "recurringConfig.intervalMinutes"],
        [{ ...base, scheduleType: "one_time", scheduledAt: "tomorrow" }, "scheduledAt"],
        [{ ...base, scheduleType: "one_time", scheduledAt: inAnHour, dailyCreditLimit: 0 }, "dailyCreditLimit"],
        [{ ...base, scheduleType: "one_time", scheduledAt: inAnHour, contextSettings: { maxTokens: 0 } }, "contextSettings.maxTokens"],
        [{ ...base, scheduleType: "one_time", scheduledAt: inAnHour, contextSettings: [] }, "contextSettings"],
        [{ ...base, name: "", scheduleType: "one_time", scheduledAt: inAnHour }, "name"],
        [{ name: "x", employeeId: employee.id, scheduleType: "one_time", scheduledAt: inAnHour }, "prompt"],
        [{ ...base, scheduleType: "one_time" }, "scheduledAt is required"],
        [{ ...base, scheduleType: "one_time", scheduledAt: new Date(start - 3_600_000) }, "scheduledAt must not be in the past"],
        [{ ...base, scheduleType: "one_time", scheduledAt: inAnHour, recurringConfig: { intervalMinutes: 5 } }, "recurringConfig applies"],
        [{ ...base, scheduleType: "recurring" }, "recurringConfig is required"],
        [{ ...base, scheduleType: "recurring", scheduledAt: inAnHour, recurringConfig: { intervalMinutes: 5 } }, "scheduledAt applies"],
        [{ ...base, scheduleType: "heartbeat", recurringConfig: { cron: "0 9 * * *" } }, "intervalMinutes"],
        [{ ...base, scheduleType: "recurring", recurringConfig: { cron: "0 0 30 2 *" } }, "recurringConfig.cron never matches"],
        [{ ...base, employeeId: "emp_unknown", scheduleType: "one_time", scheduledAt: inAnHour }, "employeeId"]
      ]
      for (const [body, field] of cases) {
        const response = yield* send(requestWithKey("POST", "/api/v0/scheduled-tasks", tenant.apiKey, body))
        expectErrorResponse(response, 400, field)
      }
      expect((yield* (yield* client({ apiKey: tenant.apiKey })).scheduledTasks.list({ query: {} })).total).toBe(0)
    }))

  it.effect("bad list queries answer 400 naming the parameter", () =>
    Effect.gen(function*() {
      const { tenant, createTask } = yield* setup()
      const task = yield* createTask()
      for (const path of [
        "/api/v0/scheduled-tasks?pageSize=0",
        `/api/v0/scheduled-tasks/${task.id}/executions?page=0`,
        `/api/v0/scheduled-tasks/${task.id}/notes?pageSize=101`
      ]) {
        const response = yield* send(requestWithKey("GET", path, tenant.apiKey))
        expectErrorResponse(response, 400, path.includes("page=") ? "page" : "pageSize")
      }
    }))

  it.effect("a model the catalog cannot serve is refused when it is set, on create and PATCH", () =>
    Effect.gen(function*() {
      const { api, tenant, createTask } = yield* setup()
      const unknown = { model: "gpt-typo" }
      const refused = yield* Effect.flip(createTask({ contextSettings: unknown }))
      expect(refused).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("Unknown model \"gpt-typo\"") })
      const task = yield* createTask({ contextSettings: { model: "local-fastest" } })
      const patched = yield* send(requestWithKey("PATCH", `/api/v0/scheduled-tasks/${task.id}`, tenant.apiKey, { contextSettings: unknown }))
      expectErrorResponse(patched, 400, /Unknown model "gpt-typo"/)
      expect((yield* api.scheduledTasks.get({ params: { task_id: task.id } })).contextSettings).toEqual({ model: "local-fastest" })
    }))

  it.effect("an employee of another company is refused", () =>
    Effect.gen(function*() {
      const { api } = yield* setup()
      const other = yield* setup("other")
      const error = yield* Effect.flip(api.scheduledTasks.create({
        payload: {
          name: "x",
          prompt: "y",
          scheduleType: "one_time",
          scheduledAt: inAnHour,
          employeeId: other.employee.id
        }
      }))
      expect(error).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("employeeId") })
    }))

  it.effect("PATCH changes the supplied fields and recomputes the schedule when it changes", () =>
    Effect.gen(function*() {
      const { tenant, api, createTask, employee } = yield* setup()
      const task = yield* createTask({ dailyCreditLimit: 10 })
      const params = { task_id: task.id }
      const renamed = yield* api.scheduledTasks.update({ params, payload: { name: "Renamed", dailyCreditLimit: null } })
      expect(renamed).toEqual({ ...task, name: "Renamed", dailyCreditLimit: null, updatedDate: renamed.updatedDate })
      expect(renamed.updatedDate.getTime()).toBeGreaterThan(task.updatedDate.getTime())

      const recurring = yield* api.scheduledTasks.update({
        params,
        payload: { scheduleType: "recurring", recurringConfig: { intervalMinutes: 30 }, timezone: "Asia/Tokyo" }
      })
      expect(recurring).toMatchObject({
        scheduleType: "recurring",
        scheduledAt: null,
        recurringConfig: { intervalMinutes: 30 },
        timezone: "Asia/Tokyo",
        status: "active",
        employeeId: employee.id
      })
      expect(recurring.nextRunAt).toEqual(new Date(start + 30 * 60_000))

      const bad = yield* send(
        requestWithKey("PATCH", `/api/v0/scheduled-tasks/${task.id}`, tenant.apiKey, { scheduleType: "one_time" })
      )
      expectErrorResponse(bad, 400, "scheduledAt is required")
      const unknownEmployee = yield* Effect.flip(api.scheduledTasks.update({ params, payload: { employeeId: "emp_x" } }))
      expect(unknownEmployee._tag).toBe("BadRequest")
    }))

  it.effect("pause, resume and a new schedule follow the task's status", () =>
    Effect.gen(function*() {
      const { api, createTask } = yield* setup()
      const task = yield* createTask()
      const params = { task_id: task.id }
      expect(yield* api.scheduledTasks.resume({ params, payload: null })).toEqual(task)
      const paused = yield* api.scheduledTasks.pause({ params, payload: null })
      expect(paused).toMatchObject({ status: "paused", nextRunAt: null })
      const rescheduledWhilePaused = yield* api.scheduledTasks.update({
        params,
        payload: { scheduledAt: new Date(start + 7_200_000) }
      })
      expect(rescheduledWhilePaused).toMatchObject({ status: "paused", nextRunAt: null })
      const resumed = yield* api.scheduledTasks.resume({ params, payload: null })
      expect(resumed).toMatchObject({ status: "active", nextRunAt: new Date(start + 7_200_000) })

      yield* TestClock.setTime(start + 7_200_000)
      yield* Scheduler.use((scheduler) => scheduler.runDue)
      expect((yield* api.scheduledTasks.get({ params })).status).toBe("completed")
      const pauseCompleted = yield* Effect.flip(api.scheduledTasks.pause({ params, payload: null }))
      expect(pauseCompleted).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("completed") })
      const again = yield* api.scheduledTasks.update({ params, payload: { scheduledAt: new Date(start + 9_000_000) } })
      expect(again).toMatchObject({ status: "active", nextRunAt: new Date(start + 9_000_000), runCount: 1 })
    }))

  it.effect("the task actions take no body at all, or a JSON body", () =>
    Effect.gen(function*() {
      const { tenant, createTask } = yield* setup()
      const task = yield* createTask()
      for (const action of ["pause", "resume", "reset", "run"]) {
        const path = `/api/v0/scheduled-tasks/${task.id}/${action}`
        const bare = yield* send(requestWithKey("POST", path, tenant.apiKey))
        expect([action, bare.status]).toEqual([action, action === "run" ? 201 : 200])
        const withBody = yield* send(requestWithKey("POST", path, tenant.apiKey, { companyId: tenant.companyId }))
        expect([action, withBody.status]).toEqual([action, action === "run" ? 201 : 200])
      }
      const bad = yield* send(
        requestWithKey("POST", `/api/v0/scheduled-tasks/${task.id}/pause`, tenant.apiKey, { companyId: 42 })
      )
      expectErrorResponse(bad, 400, "companyId")
    }))

  it.effect("reset soft-deletes the history, zeroes the counters and keeps the settings", () =>
    Effect.gen(function*() {
      const { api, createTask } = yield* setup()
      const task = yield* createTask({
        scheduleType: "recurring",
        scheduledAt: undefined,
        recurringConfig: { intervalMinutes: 10 },
        dailyCreditLimit: 100
      })
      const params = { task_id: task.id }
      yield* api.scheduledTasks.addNote({ params, payload: { content: "Focus on churn" } })
      yield* TestClock.setTime(start + 10 * 60_000)
      yield* Scheduler.use((scheduler) => scheduler.runDue)
      const ran = yield* api.scheduledTasks.get({ params })
      expect(ran.runCount).toBe(1)
      expect((yield* api.scheduledTasks.listExecutions({ params, query: {} })).total).toBe(1)
      expect((yield* api.scheduledTasks.listNotes({ params, query: {} })).total).toBe(1)

      const reset = yield* api.scheduledTasks.reset({ params, payload: null })
      expect(reset).toEqual({ ...ran, runCount: 0, lastRunAt: null, updatedDate: reset.updatedDate })
      expect((yield* api.scheduledTasks.listExecutions({ params, query: {} })).total).toBe(0)
      expect((yield* api.scheduledTasks.listNotes({ params, query: {} })).total).toBe(0)
      const log = yield* TasksRepo.use((repo) => repo.dailyLog(task.id, "2026-06-01"))
      expect(Option.isNone(log)).toBe(true)
      expect(yield* api.scheduledTasks.get({ params })).toEqual(reset)
    }))

  it.effect("reset is refused while a worker runs the task", () =>
    Effect.gen(function*() {
      const { api, createTask } = yield* setup()
      const task = yield* createTask({ scheduledAt: new Date(start + 60_000) })
      yield* TestClock.setTime(start + 60_000)
      const now = new Date(start + 60_000)
      yield* TasksRepo.use((repo) => repo.claimDue(now, new Date(now.getTime() + testLeaseMs), 100))
      const params = { task_id: task.id }
      const refused = yield* Effect.flip(api.scheduledTasks.reset({ params, payload: null }))
      expect(refused).toMatchObject({ _tag: "BadRequest", error: expect.stringContaining("running") })
      yield* TestClock.adjust(testLeaseMs)
      expect((yield* api.scheduledTasks.reset({ params, payload: {} })).runCount).toBe(0)
    }))

  it.effect("DELETE removes the task from the API and from the scheduler", () =>
    Effect.gen(function*() {
      const { api, createTask } = yield* setup()
      const task = yield* createTask({ scheduledAt: new Date(start + 60_000) })
      const params = { task_id: task.id }
      expect(yield* api.scheduledTasks.delete({ params })).toEqual(task)
      expect((yield* Effect.flip(api.scheduledTasks.get({ params })))._tag).toBe("NotFound")
      yield* TestClock.setTime(start + 60_000)
      const claims = yield* TasksRepo.use((repo) => repo.claimDue(new Date(start + 60_000), new Date(start + 120_000), 1000))
      expect(claims.map((claim) => claim.task.id)).not.toContain(task.id)
    }))

  it.effect("every endpoint with a task id answers 404 for another company's task", () =>
    Effect.gen(function*() {
      const { api } = yield* setup()
      const other = yield* setup("other")
      const theirs = yield* other.createTask()
      for (const task_id of [theirs.id, "tsk_unknown"]) {
        const params = { task_id }
        const failures = [
          yield* Effect.flip(api.scheduledTasks.get({ params })),
          yield* Effect.flip(api.scheduledTasks.update({ params, payload: { name: "x" } })),
          yield* Effect.flip(api.scheduledTasks.delete({ params })),
          yield* Effect.flip(api.scheduledTasks.pause({ params, payload: null })),
          yield* Effect.flip(api.scheduledTasks.resume({ params, payload: null })),
          yield* Effect.flip(api.scheduledTasks.run({ params, payload: null })),
          yield* Effect.flip(api.scheduledTasks.reset({ params, payload: null })),
          yield* Effect.flip(api.scheduledTasks.listExecutions({ params, query: {} })),
          yield* Effect.flip(api.scheduledTasks.addNote({ params, payload: { content: "x" } })),
          yield* Effect.flip(api.scheduledTasks.listNotes({ params, query: {} }))
        ]
        expect(failures.map((failure) => failure._tag)).toEqual(Array(10).fill("NotFound"))
      }
      expect((yield* other.api.scheduledTasks.get({ params: { task_id: theirs.id } })).runCount).toBe(0)
    }))

  it.effect("another company's id in a body answers 404", () =>
    Effect.gen(function*() {
      const { api, createTask, employee } = yield* setup()
      const other = yield* setup("other")
      const task = yield* createTask()
      const params = { task_id: task.id }
      const companyId = other.tenant.companyId
      const failures = [
        yield* Effect.flip(api.scheduledTasks.create({
          payload: { companyId, name: "x", prompt: "y", scheduleType: "one_time", scheduledAt: inAnHour, employeeId: employee.id }
        })),
        yield* Effect.flip(api.scheduledTasks.update({ params, payload: { companyId, name: "x" } })),
        yield* Effect.flip(api.scheduledTasks.reset({ params, payload: { companyId } })),
        yield* Effect.flip(api.scheduledTasks.run({ params, payload: { companyId } }))
      ]
      expect(failures.map((failure) => failure._tag)).toEqual(["NotFound", "NotFound", "NotFound", "NotFound"])
    }))

  it.effect("members change only their own tasks; viewers only read", () =>
    Effect.gen(function*() {
      const { tenant, createTask, employee } = yield* setup()
      const companyTask = yield* createTask()
      const member = yield* addPerson(tenant, { companyRole: "member" })
      const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
      const asMember = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
      const asViewer = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
      const params = { task_id: companyTask.id }

      expect((yield* asMember.scheduledTasks.get({ params })).id).toBe(companyTask.id)
      for (const denied of [
        yield* Effect.flip(asMember.scheduledTasks.update({ params, payload: { name: "mine" } })),
        yield* Effect.flip(asMember.scheduledTasks.pause({ params, payload: null })),
        yield* Effect.flip(asMember.scheduledTasks.run({ params, payload: null })),
        yield* Effect.flip(asMember.scheduledTasks.reset({ params, payload: null })),
        yield* Effect.flip(asMember.scheduledTasks.delete({ params }))
      ]) {
        expect(denied._tag).toBe("Forbidden")
      }
      const own = yield* asMember.scheduledTasks.create({
        payload: { name: "Mine", prompt: "p", scheduleType: "one_time", scheduledAt: inAnHour, employeeId: employee.id }
      })
      expect(own.userId).toBe(member.userId)
      expect((yield* asMember.scheduledTasks.pause({ params: { task_id: own.id }, payload: null })).status).toBe("paused")

      expect((yield* asViewer.scheduledTasks.list({ query: {} })).total).toBe(2)
      const viewerCreate = yield* Effect.flip(asViewer.scheduledTasks.create({
        payload: { name: "x", prompt: "p", scheduleType: "one_time", scheduledAt: inAnHour, employeeId: employee.id }
      }))
      expect(viewerCreate._tag).toBe("Forbidden")
    }))

  it.effect("notes are input for the next run, listed newest first", () =>
    Effect.gen(function*() {
      const { api, createTask, tenant } = yield* setup()
      const task = yield* createTask()
      const params = { task_id: task.id }
      yield* api.scheduledTasks.addNote({ params, payload: { content: "first" } })
      yield* api.scheduledTasks.addNote({ params, payload: { content: "second" } })
      const notes = yield* api.scheduledTasks.listNotes({ params, query: {} })
      expect(notes.items.map((note) => [note.kind, note.content, note.processedAt])).toEqual([
        ["input", "second", null],
        ["input", "first", null]
      ])
      const empty = yield* send(
        requestWithKey("POST", `/api/v0/scheduled-tasks/${task.id}/notes`, tenant.apiKey, { content: " " })
      )
      expectErrorResponse(empty, 400, "content")
    }))
})
