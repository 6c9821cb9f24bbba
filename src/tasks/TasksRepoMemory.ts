import { Effect, Layer, Option } from "effect"
import { newId } from "../platform/Ids.ts"
import { MemoryStore, memoryTable, type Tables } from "../storage/MemoryStore.ts"
import { movedForward, newestFirstPage } from "../storage/Windows.ts"
import {
  type DailyLogRecord,
  type EvaluationRecord,
  type ExecutionRecord,
  type NoteRecord,
  type TaskRecord,
  TasksRepo,
  type TasksRepository
} from "./TasksRepo.ts"

/** The memory backend's rows: the records plus the lease and soft-deletion columns. */
export interface StoredTask extends TaskRecord {
  readonly leaseToken: string | null
  readonly leaseExpiresAt: Date | null
  readonly deletedAt: Date | null
}

export interface StoredExecution extends ExecutionRecord {
  readonly deletedAt: Date | null
}

export interface StoredEvaluation extends EvaluationRecord {
  readonly deletedAt: Date | null
}

export interface StoredNote extends NoteRecord {
  readonly deletedAt: Date | null
}

export interface StoredDailyLog extends DailyLogRecord {
  readonly updatedAt: Date
  readonly deletedAt: Date | null
}

/** The memory backend's scheduledTasks (see `MemoryStore`). */
export const scheduledTasksTable = memoryTable("scheduledTasks", (): Map<string, StoredTask> => new Map())

/** The memory backend's taskExecutions (see `MemoryStore`). */
export const taskExecutionsTable = memoryTable("taskExecutions", (): Map<string, StoredExecution> => new Map())

/** The memory backend's taskEvaluations (see `MemoryStore`). */
export const taskEvaluationsTable = memoryTable("taskEvaluations", (): Map<string, StoredEvaluation> => new Map())

/** The memory backend's taskDailyLogs (see `MemoryStore`). */
export const taskDailyLogsTable = memoryTable("taskDailyLogs", (): Map<string, StoredDailyLog> => new Map())

/** The memory backend's taskNotes (see `MemoryStore`). */
export const taskNotesTable = memoryTable("taskNotes", (): Map<string, StoredNote> => new Map())

/** The repository on the memory backend. */
export const tasksRepoMemory = Layer.effect(TasksRepo, MemoryStore.useSync((store): TasksRepository => {
  const liveTask = (tables: Tables, companyId: string | undefined, id: string) => {
    const task = tables(scheduledTasksTable).get(id)
    return task !== undefined && task.deletedAt === null && (companyId === undefined || task.companyId === companyId)
      ? task
      : undefined
  }
  const recordOf = ({ leaseToken: _, leaseExpiresAt: __, deletedAt: ___, ...task }: StoredTask): TaskRecord => task
  const liveRows = <A extends { readonly taskId: string; readonly deletedAt: Date | null }>(
    rows: Iterable<A>,
    taskId: string
  ) => [...rows].filter((row) => row.taskId === taskId && row.deletedAt === null)
  const softDelete = <A extends { readonly taskId: string; readonly deletedAt: Date | null }>(
    rows: Map<string, A>,
    taskId: string,
    now: Date
  ) => {
    for (const [key, row] of rows) {
      if (row.taskId === taskId && row.deletedAt === null) rows.set(key, { ...row, deletedAt: now })
    }
  }
  const withoutDeletion = <A extends { readonly deletedAt: Date | null }>({ deletedAt: _, ...row }: A) => row
  const leaseFree = (task: StoredTask, now: Date) =>
    task.leaseExpiresAt === null || task.leaseExpiresAt.getTime() <= now.getTime()
  const isDue = (task: StoredTask, now: Date) =>
    task.deletedAt === null &&
    ((task.status === "active" && task.nextRunAt !== null && task.nextRunAt.getTime() <= now.getTime()) ||
      task.pendingExecutionId !== null)
  return {
    create: (task) =>
      store.write((tables) => {
        tables(scheduledTasksTable).set(task.id, { ...task, leaseToken: null, leaseExpiresAt: null, deletedAt: null })
        return task
      }),
    get: (companyId, id) =>
      store.read((tables) => Option.map(Option.fromNullishOr(liveTask(tables, companyId, id)), recordOf)),
    list: (companyId, window) =>
      store.read((tables) =>
        newestFirstPage(
          [...tables(scheduledTasksTable).values()]
            .filter((task) => task.companyId === companyId && task.deletedAt === null)
            .map(recordOf),
          window
        )
      ),
    update: (companyId, id, change, now) =>
      store.write((tables) => {
        const task = liveTask(tables, companyId, id)
        if (task === undefined) return Option.none()
        const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
        const changed: StoredTask = { ...task, ...defined, updatedAt: movedForward(task.updatedAt, now) }
        tables(scheduledTasksTable).set(id, changed)
        return Option.some(recordOf(changed))
      }),
    remove: (companyId, id, now) =>
      store.write((tables) => {
        const task = liveTask(tables, companyId, id)
        if (task === undefined) return false
        tables(scheduledTasksTable).set(id, { ...task, deletedAt: now, pendingExecutionId: null })
        return true
      }),
    isLeased: (id, now) =>
      store.read((tables) => {
        const task = tables(scheduledTasksTable).get(id)
        return task !== undefined && !leaseFree(task, now)
      }),
    reset: (companyId, id, now) =>
      store.write((tables) => {
        const task = liveTask(tables, companyId, id)
        if (task === undefined) return Option.none()
        const reset: StoredTask = {
          ...task,
          runCount: 0,
          lastRunAt: null,
          pendingExecutionId: null,
          updatedAt: movedForward(task.updatedAt, now)
        }
        tables(scheduledTasksTable).set(id, reset)
        softDelete(tables(taskExecutionsTable), id, now)
        softDelete(tables(taskEvaluationsTable), id, now)
        softDelete(tables(taskDailyLogsTable), id, now)
        softDelete(tables(taskNotesTable), id, now)
        return Option.some(recordOf(reset))
      }),
    requestRun: (companyId, id, execution) =>
      store.write((tables) => {
        const task = liveTask(tables, companyId, id)
        if (task === undefined) return Option.none()
        const pending = task.pendingExecutionId === null ? undefined : tables(taskExecutionsTable).get(task.pendingExecutionId)
        if (pending !== undefined) return Option.some(withoutDeletion(pending))
        tables(taskExecutionsTable).set(execution.id, { ...execution, deletedAt: null })
        tables(scheduledTasksTable).set(id, { ...task, pendingExecutionId: execution.id })
        return Option.some(execution)
      }),
    listExecutions: (taskId, window) =>
      store.read((tables) => {
        const page = newestFirstPage(liveRows(tables(taskExecutionsTable).values(), taskId), window)
        const evaluations = liveRows(tables(taskEvaluationsTable).values(), taskId)
        return {
          rows: page.rows.map((execution) => {
            const evaluation = evaluations.find((e) => e.executionId === execution.id)
            return {
              ...withoutDeletion(execution),
              evaluation: evaluation === undefined ? null : withoutDeletion(evaluation)
            }
          }),
          total: page.total
        }
      }),
    addNote: (note) =>
      store.write((tables) => {
        tables(taskNotesTable).set(note.id, { ...note, deletedAt: null })
        return note
      }),
    listNotes: (taskId, window) =>
      store.read((tables) => {
        const page = newestFirstPage(liveRows(tables(taskNotesTable).values(), taskId), window)
        return { rows: page.rows.map(withoutDeletion), total: page.total }
      }),

    claimDue: (now, expiresAt, limit) =>
      store.write((tables) => {
        const token = newId("lease")
        const due = [...tables(scheduledTasksTable).values()]
          .filter((task) => isDue(task, now) && leaseFree(task, now))
          .sort((a, b) => (a.nextRunAt?.getTime() ?? 0) - (b.nextRunAt?.getTime() ?? 0))
          .slice(0, limit)
        return due.map((task) => {
          tables(scheduledTasksTable).set(task.id, { ...task, leaseToken: token, leaseExpiresAt: expiresAt })
          return { task: recordOf(task), token }
        })
      }),
    renewLease: (id, token, expiresAt) =>
      store.write((tables) => {
        const task = tables(scheduledTasksTable).get(id)
        if (task === undefined || task.leaseToken !== token || task.deletedAt !== null) return false
        tables(scheduledTasksTable).set(id, { ...task, leaseExpiresAt: expiresAt })
        return true
      }),
    startExecution: (execution) =>
      store.write((tables) => {
        const previous = execution.trigger === "manual"
          ? tables(taskExecutionsTable).get(execution.id)
          : liveRows(tables(taskExecutionsTable).values(), execution.taskId).find((row) =>
            row.trigger !== "manual" && row.scheduledFor.getTime() === execution.scheduledFor.getTime()
          )
        const started: StoredExecution = previous === undefined
          ? { ...execution, deletedAt: null }
          : { ...previous, status: "running", attempts: previous.attempts + 1, startedAt: execution.startedAt }
        tables(taskExecutionsTable).set(started.id, started)
        return withoutDeletion(started)
      }),
    pendingInputs: (taskId) =>
      store.read((tables) =>
        liveRows(tables(taskNotesTable).values(), taskId)
          .filter((note) => note.kind === "input" && note.processedAt === null)
          .sort((a, b) => a.id.localeCompare(b.id))
          .map(withoutDeletion)
      ),
    dailyLog: (taskId, day) =>
      store.read((tables) =>
        Option.map(
          Option.fromNullishOr(
            [...tables(taskDailyLogsTable).values()].find((log) =>
              log.taskId === taskId && log.day === day && log.deletedAt === null
            )
          ),
          ({ updatedAt: _, ...log }) => withoutDeletion(log)
        )
      ),
    lastRunCredits: (taskId) =>
      store.read((tables) =>
        liveRows(tables(taskExecutionsTable).values(), taskId)
          .filter((execution) => execution.status === "succeeded")
          .sort((a, b) => (b.finishedAt?.getTime() ?? 0) - (a.finishedAt?.getTime() ?? 0))[0]?.credits ?? 0
      ),

    atomically: (effect) => Effect.uninterruptible(effect),
    lockClaimed: (id, token) =>
      store.read((tables) => {
        const task = tables(scheduledTasksTable).get(id)
        return task !== undefined && task.leaseToken === token && task.deletedAt === null
          ? Option.some(recordOf(task))
          : Option.none()
      }),
    finishExecution: (id, result) =>
      store.write((tables) => {
        const execution = tables(taskExecutionsTable).get(id)
        if (execution !== undefined) tables(taskExecutionsTable).set(id, { ...execution, ...result })
      }),
    addEvaluation: (evaluation) =>
      store.write((tables) => void tables(taskEvaluationsTable).set(evaluation.id, { ...evaluation, deletedAt: null })),
    recordDay: (taskId, day, increment, now) =>
      store.write((tables) => {
        const key = [...tables(taskDailyLogsTable).entries()].find(([, log]) =>
          log.taskId === taskId && log.day === day && log.deletedAt === null
        )?.[0]
        const log = key === undefined ? undefined : tables(taskDailyLogsTable).get(key)
        tables(taskDailyLogsTable).set(key ?? newId("day"), {
          taskId,
          day,
          runs: (log?.runs ?? 0) + increment.runs,
          failures: (log?.failures ?? 0) + increment.failures,
          checkIns: (log?.checkIns ?? 0) + increment.checkIns,
          credits: (log?.credits ?? 0) + increment.credits,
          inputTokens: (log?.inputTokens ?? 0) + increment.inputTokens,
          outputTokens: (log?.outputTokens ?? 0) + increment.outputTokens,
          stoppedReason: increment.stoppedReason ?? log?.stoppedReason ?? null,
          updatedAt: now,
          deletedAt: null
        })
      }),
    consumeInputs: (noteIds, executionId, now) =>
      store.write((tables) => {
        for (const id of noteIds) {
          const note = tables(taskNotesTable).get(id)
          if (note !== undefined) tables(taskNotesTable).set(id, { ...note, processedAt: now, executionId })
        }
      }),
    advance: (id, advance, now) =>
      store.write((tables) => {
        const task = tables(scheduledTasksTable).get(id)
        if (task === undefined) return
        tables(scheduledTasksTable).set(id, {
          ...task,
          runCount: task.runCount + (advance.ran ? 1 : 0),
          lastRunAt: advance.ran ? now : task.lastRunAt,
          nextRunAt: advance.nextRunAt,
          status: advance.status,
          pendingExecutionId: task.pendingExecutionId === advance.handledExecutionId ? null : task.pendingExecutionId,
          leaseToken: null,
          leaseExpiresAt: null
        })
      })
  }
}))
