import { type Context, Effect, Layer, Option } from "effect"
import { newId } from "../platform/Ids.ts"
import { MemoryStore, memoryTable, type Tables } from "../storage/MemoryStore.ts"
import { movedForward, newestFirstPage } from "../storage/Windows.ts"
import { abandonedSendError } from "./ExecutionStates.ts"
import type { ExecutionRecord, SequenceRecord, SequencesRepository } from "./SequencesRepo.ts"

/** The memory backend's sequences and executions (see `MemoryStore`). */
export const sequencesTable = memoryTable("sequences", (): Map<string, SequenceRecord> => new Map())
export const sequenceExecutionsTable = memoryTable("sequenceExecutions", (): Map<string, ExecutionRecord> => new Map())

interface Lease {
  readonly token: string
  readonly expiresAt: Date
}

/** Leases live beside the records, as the SQL columns do. */
const executionLeasesTable = memoryTable("sequenceExecutionLeases", (): Map<string, Lease> => new Map())

const stepKey = (execution: ExecutionRecord) => `${execution.sequenceId}\u0000${execution.listRowId}\u0000${execution.stepIndex}`

export const sequencesMemory = <Self>(tag: Context.Key<Self, SequencesRepository>) =>
  Layer.effect(tag, MemoryStore.useSync((store): SequencesRepository => {
    const executions = (tables: Tables) => tables(sequenceExecutionsTable)
    const leases = (tables: Tables) => tables(executionLeasesTable)
    const free = (tables: Tables, id: string, now: Date) => {
      const lease = leases(tables).get(id)
      return lease === undefined || lease.expiresAt.getTime() <= now.getTime()
    }
    const held = (tables: Tables, id: string, token: string) => leases(tables).get(id)?.token === token
    /** Stores a change of a leased execution and frees its lease. */
    const settle = (tables: Tables, execution: ExecutionRecord, change: Partial<ExecutionRecord>, now: Date) => {
      executions(tables).set(execution.id, { ...execution, ...change, updatedAt: now })
      leases(tables).delete(execution.id)
    }
    const insert = (tables: Tables, added: ReadonlyArray<ExecutionRecord>) => {
      const taken = new Set([...executions(tables).values()].map(stepKey))
      let count = 0
      for (const execution of added) {
        if (taken.has(stepKey(execution))) continue
        taken.add(stepKey(execution))
        executions(tables).set(execution.id, execution)
        count++
      }
      return count
    }
    const claim = (now: Date, expiresAt: Date, limit: number, due: (execution: ExecutionRecord) => boolean) =>
      store.write((tables) => {
        const token = newId("lease")
        const claimed = [...executions(tables).values()]
          .filter((execution) => due(execution) && free(tables, execution.id, now))
          .toSorted((a, b) => a.id.localeCompare(b.id))
          .slice(0, limit)
        for (const execution of claimed) leases(tables).set(execution.id, { token, expiresAt })
        return { token, executions: claimed }
      })
    const inSequence = (tables: Tables, sequenceId: string, ids: ReadonlyArray<string>) =>
      [...new Set(ids)].flatMap((id) => {
        const execution = executions(tables).get(id)
        return execution !== undefined && execution.sequenceId === sequenceId ? [execution] : []
      })

    return {
      create: (sequence) =>
        store.write((tables) => {
          tables(sequencesTable).set(sequence.id, sequence)
          return sequence
        }),
      get: (companyId, id) =>
        store.read((tables) =>
          Option.filter(Option.fromNullishOr(tables(sequencesTable).get(id)), (s) => s.companyId === companyId)
        ),
      list: (companyId, window) =>
        store.read((tables) =>
          newestFirstPage([...tables(sequencesTable).values()].filter((s) => s.companyId === companyId), window)
        ),
      update: (companyId, id, change, now) =>
        store.write((tables) => {
          const sequence = tables(sequencesTable).get(id)
          if (sequence === undefined || sequence.companyId !== companyId) return Option.none()
          const changed: SequenceRecord = {
            ...sequence,
            name: change.name ?? sequence.name,
            steps: change.steps ?? sequence.steps,
            listId: change.listId ?? sequence.listId,
            updatedAt: movedForward(sequence.updatedAt, now)
          }
          tables(sequencesTable).set(id, changed)
          return Option.some(changed)
        }),
      enroll: (added) => store.write((tables) => insert(tables, added)),
      executions: (sequenceId, status, window) =>
        store.read((tables) =>
          newestFirstPage(
            [...executions(tables).values()].filter((e) =>
              e.sequenceId === sequenceId && (status === undefined || e.status === status)
            ),
            window
          )
        ),
      executionsByIds: (sequenceId, ids) => store.read((tables) => inSequence(tables, sequenceId, ids)),
      execution: (id) => store.read((tables) => Option.fromNullishOr(executions(tables).get(id))),
      approve: (sequenceId, ids, now) =>
        store.write((tables) =>
          inSequence(tables, sequenceId, ids)
            .filter((e) => e.status === "draft" && e.draftedAt !== null)
            .map((e) => {
              executions(tables).set(e.id, { ...e, status: "approved", approvedAt: now, updatedAt: now })
              return e.id
            })
        ),
      regenerate: (sequenceId, ids, now) =>
        store.write((tables) =>
          inSequence(tables, sequenceId, ids)
            .filter((e) => e.status === "failed")
            .map((e) => {
              settle(tables, e, {
                status: "draft",
                subject: null,
                body: null,
                errorMessage: null,
                draftedAt: null,
                approvedAt: null,
                sendStartedAt: null,
                attempts: 0
              }, now)
              return e.id
            })
        ),
      claimDrafts: (now, expiresAt, limit) =>
        claim(now, expiresAt, limit, (e) => e.status === "draft" && e.draftedAt === null),
      recordDraft: (id, token, outcome, now) =>
        store.write((tables) => {
          const execution = executions(tables).get(id)
          if (execution === undefined || !held(tables, id, token)) return false
          if (execution.status !== "draft" || execution.draftedAt !== null) return false
          settle(
            tables,
            execution,
            outcome._tag === "Drafted"
              ? { subject: outcome.subject, body: outcome.body, draftedAt: now }
              : { status: "failed", errorMessage: outcome.error },
            now
          )
          return true
        }),
      claimSends: (now, expiresAt, limit) =>
        Effect.andThen(
          store.write((tables) => {
            for (const execution of [...executions(tables).values()]) {
              if (execution.status === "approved" && execution.sendStartedAt !== null && free(tables, execution.id, now)) {
                settle(tables, execution, { status: "failed", errorMessage: abandonedSendError }, now)
              }
            }
          }),
          claim(now, expiresAt, limit, (e) =>
            e.status === "approved" && e.sendStartedAt === null && e.dueAt.getTime() <= now.getTime())
        ),
      beginSend: (id, token, now) =>
        store.write((tables) => {
          const execution = executions(tables).get(id)
          const lease = leases(tables).get(id)
          if (execution === undefined || lease?.token !== token || lease.expiresAt.getTime() <= now.getTime()) return false
          if (execution.status !== "approved" || execution.sendStartedAt !== null) return false
          executions(tables).set(id, { ...execution, sendStartedAt: now, updatedAt: now })
          return true
        }),
      recordSend: (id, token, result, maxAttempts, now) =>
        store.write((tables) => {
          const execution = executions(tables).get(id)
          if (execution === undefined || !held(tables, id, token) || execution.status !== "approved") return false
          switch (result._tag) {
            case "Sent":
              settle(tables, execution, { status: "sent", sentAt: now, messageId: result.messageId }, now)
              if (result.next !== undefined) insert(tables, [result.next])
              return true
            case "Retry": {
              const attempts = execution.attempts + 1
              const exhausted = attempts >= maxAttempts
              settle(tables, execution, {
                attempts,
                sendStartedAt: null,
                errorMessage: result.error,
                status: exhausted ? "failed" : "approved",
                dueAt: exhausted ? execution.dueAt : result.at
              }, now)
              return true
            }
            case "Failed":
              settle(tables, execution, { status: "failed", errorMessage: result.error }, now)
              return true
          }
        }),
      renew: (token, expiresAt) =>
        store.write((tables) => {
          let held = false
          for (const [id, lease] of leases(tables)) {
            const status = executions(tables).get(id)?.status
            if (lease.token !== token || (status !== "draft" && status !== "approved")) continue
            leases(tables).set(id, { token, expiresAt })
            held = true
          }
          return held
        }),
      track: (id, event, now) =>
        store.write((tables) => {
          const execution = executions(tables).get(id)
          if (execution === undefined) return
          executions(tables).set(id, event === "open"
            ? { ...execution, openCount: execution.openCount + 1, firstOpenedAt: execution.firstOpenedAt ?? now }
            : { ...execution, clickCount: execution.clickCount + 1, firstClickedAt: execution.firstClickedAt ?? now })
        }),
      release: (token) =>
        store.write((tables) => {
          for (const [id, lease] of leases(tables)) {
            if (lease.token === token && executions(tables).get(id)?.sendStartedAt === null) leases(tables).delete(id)
          }
        }),
      leave: (companyId, email, reason, now) =>
        store.write((tables) => {
          const address = email.toLowerCase()
          const leaving = [...executions(tables).values()].filter((e) =>
            e.companyId === companyId && e.email.toLowerCase() === address &&
            (e.status === "draft" || e.status === "approved") && e.sendStartedAt === null
          )
          for (const execution of leaving) settle(tables, execution, { status: "skipped", errorMessage: reason }, now)
          return leaving.length
        })
    }
  }))
