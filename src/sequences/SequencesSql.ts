import { type Context, Effect, Layer, Option } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { jsonParam } from "../storage/Rows.ts"
import { selectPage } from "../storage/Windows.ts"
import { abandonedSendError } from "./ExecutionStates.ts"
import type { ExecutionRecord, ExecutionStatus, SequenceRecord, SequenceStep, SequencesRepository } from "./SequencesRepo.ts"

/** The PostgreSQL / PGlite sequences repository. */
export const sequencesSql = <Self>(tag: Context.Key<Self, SequencesRepository>) =>
  Layer.effect(tag, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
    const mine = (id: string, token: string) => sql`id = ${id} AND lease_token = ${token}`
    const unleased = (now: Date) => sql`lease_token = NULL, lease_expires_at = NULL, updated_at = ${now}`
    const claim = (now: Date, expiresAt: Date, limit: number, due: Statement.Fragment) =>
      Effect.gen(function*() {
        const token = newId("lease")
        // A CTE runs once: the rows it picks (and locks) are exactly the ones leased, never more than `limit`.
        const rows = yield* sql<ExecutionRow>`
          WITH picked AS (
            SELECT id FROM sequence_executions WHERE ${due} AND ${leaseFree(now)}
            ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
          )
          UPDATE sequence_executions SET lease_token = ${token}, lease_expires_at = ${expiresAt}
          FROM picked WHERE sequence_executions.id = picked.id
          RETURNING sequence_executions.*`
        return { token, executions: rows.map(executionFromRow).toSorted((a, b) => a.id.localeCompare(b.id)) }
      })
    /** New executions (unwritten drafts), a chunk per statement: one JSON parameter expanded by `jsonb_to_recordset`. */
    const insertExecutions = (executions: ReadonlyArray<ExecutionRecord>) =>
      Effect.gen(function*() {
        let added = 0
        for (let start = 0; start < executions.length; start += insertChunk) {
          const chunk = executions.slice(start, start + insertChunk).map(newExecutionRow)
          const rows = yield* sql`
            INSERT INTO sequence_executions (id, sequence_id, company_id, organization_id, list_row_id, email, fields,
              step_index, status, due_at, created_at, updated_at)
            SELECT r.id, r.sequence_id, r.company_id, r.organization_id, r.list_row_id, r.email, r.fields, r.step_index,
              'draft', r.due_at, r.created_at, r.created_at
            FROM jsonb_to_recordset(${jsonParam(chunk)}::jsonb) AS r(id text, sequence_id text, company_id text,
              organization_id text, list_row_id text, email text, fields jsonb, step_index integer, due_at timestamptz,
              created_at timestamptz)
            ON CONFLICT (sequence_id, list_row_id, step_index) DO NOTHING RETURNING id`
          added += rows.length
        }
        return added
      })

    return {
      create: Effect.fn("SequencesRepo.create")(function*(sequence) {
        const rows = yield* sql<SequenceRow>`
          INSERT INTO sequences (id, company_id, organization_id, user_id, name, steps, list_id, created_at, updated_at)
          VALUES (${sequence.id}, ${sequence.companyId}, ${sequence.organizationId}, ${sequence.userId}, ${sequence.name},
            ${jsonParam(sequence.steps)}::jsonb, ${sequence.listId}, ${sequence.createdAt}, ${sequence.updatedAt})
          RETURNING *`
        return sequenceFromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("SequencesRepo.get")(function*(companyId, id) {
        const rows = yield* sql<SequenceRow>`SELECT * FROM sequences WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), sequenceFromRow)
      }, Effect.orDie),
      list: Effect.fn("SequencesRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<SequenceRow>(sql, "sequences", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(sequenceFromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("SequencesRepo.update")(function*(companyId, id, change, now) {
        const rows = yield* sql<SequenceRow>`
          UPDATE sequences SET
            name = coalesce(${change.name ?? null}, name),
            steps = coalesce(${change.steps === undefined ? null : jsonParam(change.steps)}::jsonb, steps),
            list_id = coalesce(${change.listId ?? null}, list_id),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), sequenceFromRow)
      }, Effect.orDie),
      enroll: Effect.fn("SequencesRepo.enroll")(function*(executions) {
        return yield* insertExecutions(executions)
      }, Effect.orDie),
      executions: Effect.fn("SequencesRepo.executions")(function*(sequenceId, status, window) {
        const where = status === undefined
          ? sql`sequence_id = ${sequenceId}`
          : sql`sequence_id = ${sequenceId} AND status = ${status}`
        const page = yield* selectPage<ExecutionRow>(sql, "sequence_executions", where, window)
        return { rows: page.rows.map(executionFromRow), total: page.total }
      }, Effect.orDie),
      executionsByIds: Effect.fn("SequencesRepo.executionsByIds")(function*(sequenceId, ids) {
        if (ids.length === 0) return []
        const rows = yield* sql<ExecutionRow>`
          SELECT * FROM sequence_executions WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)}`
        return rows.map(executionFromRow)
      }, Effect.orDie),
      execution: Effect.fn("SequencesRepo.execution")(function*(id) {
        const rows = yield* sql<ExecutionRow>`SELECT * FROM sequence_executions WHERE id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), executionFromRow)
      }, Effect.orDie),
      approve: Effect.fn("SequencesRepo.approve")(function*(sequenceId, ids, now) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          UPDATE sequence_executions SET status = 'approved', approved_at = ${now}, updated_at = ${now}
          WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)} AND status = 'draft' AND drafted_at IS NOT NULL
          RETURNING id`
        return rows.map((row) => row.id)
      }, Effect.orDie),
      regenerate: Effect.fn("SequencesRepo.regenerate")(function*(sequenceId, ids, now) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          UPDATE sequence_executions SET status = 'draft', subject = NULL, body = NULL, error_message = NULL,
            drafted_at = NULL, approved_at = NULL, send_started_at = NULL, attempts = 0, ${unleased(now)}
          WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)} AND status = 'failed'
          RETURNING id`
        return rows.map((row) => row.id)
      }, Effect.orDie),
      claimDrafts: Effect.fn("SequencesRepo.claimDrafts")(function*(now, expiresAt, limit) {
        return yield* claim(now, expiresAt, limit, sql`status = 'draft' AND drafted_at IS NULL`)
      }, Effect.orDie),
      recordDraft: Effect.fn("SequencesRepo.recordDraft")(function*(id, token, outcome, now) {
        const rows = outcome._tag === "Drafted"
          ? yield* sql`UPDATE sequence_executions SET subject = ${outcome.subject}, body = ${outcome.body},
              drafted_at = ${now}, ${unleased(now)}
              WHERE ${mine(id, token)} AND status = 'draft' AND drafted_at IS NULL RETURNING id`
          : yield* sql`UPDATE sequence_executions SET status = 'failed', error_message = ${outcome.error}, ${unleased(now)}
              WHERE ${mine(id, token)} AND status = 'draft' AND drafted_at IS NULL RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      claimSends: Effect.fn("SequencesRepo.claimSends")(function*(now, expiresAt, limit) {
        yield* sql`UPDATE sequence_executions SET status = 'failed', error_message = ${abandonedSendError}, ${unleased(now)}
          WHERE status = 'approved' AND send_started_at IS NOT NULL AND ${leaseFree(now)}`
        return yield* claim(now, expiresAt, limit, sql`status = 'approved' AND send_started_at IS NULL AND due_at <= ${now}`)
      }, Effect.orDie),
      beginSend: Effect.fn("SequencesRepo.beginSend")(function*(id, token, now) {
        const rows = yield* sql`UPDATE sequence_executions SET send_started_at = ${now}, updated_at = ${now}
          WHERE ${mine(id, token)} AND status = 'approved' AND send_started_at IS NULL AND lease_expires_at > ${now}
          RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      recordSend: Effect.fn("SequencesRepo.recordSend")(function*(id, token, result, maxAttempts, now) {
        const where = sql`${mine(id, token)} AND status = 'approved'`
        switch (result._tag) {
          case "Sent":
            return yield* sql.withTransaction(Effect.gen(function*() {
              const rows = yield* sql`UPDATE sequence_executions SET status = 'sent', sent_at = ${now},
                message_id = ${result.messageId}, ${unleased(now)} WHERE ${where} RETURNING id`
              if (rows.length === 0) return false
              if (result.next !== undefined) yield* insertExecutions([result.next])
              return true
            }))
          case "Retry": {
            const rows = yield* sql`UPDATE sequence_executions SET attempts = attempts + 1, send_started_at = NULL,
                error_message = ${result.error},
                status = CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'approved' END,
                due_at = CASE WHEN attempts + 1 >= ${maxAttempts} THEN due_at ELSE ${result.at} END, ${unleased(now)}
              WHERE ${where} RETURNING id`
            return rows.length > 0
          }
          case "Failed": {
            const rows = yield* sql`UPDATE sequence_executions SET status = 'failed', error_message = ${result.error},
                ${unleased(now)} WHERE ${where} RETURNING id`
            return rows.length > 0
          }
        }
      }, Effect.orDie),
      renew: Effect.fn("SequencesRepo.renew")(function*(token, expiresAt) {
        const rows = yield* sql`UPDATE sequence_executions SET lease_expires_at = ${expiresAt}
          WHERE lease_token = ${token} AND status IN ('draft', 'approved') RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      track: Effect.fn("SequencesRepo.track")(function*(id, event, now) {
        yield* event === "open"
          ? sql`UPDATE sequence_executions SET open_count = open_count + 1,
              first_opened_at = coalesce(first_opened_at, ${now}) WHERE id = ${id}`
          : sql`UPDATE sequence_executions SET click_count = click_count + 1,
              first_clicked_at = coalesce(first_clicked_at, ${now}) WHERE id = ${id}`
      }, Effect.orDie),
      release: Effect.fn("SequencesRepo.release")(function*(token) {
        yield* sql`UPDATE sequence_executions SET lease_token = NULL, lease_expires_at = NULL
          WHERE lease_token = ${token} AND send_started_at IS NULL`
      }, Effect.orDie),
      leave: Effect.fn("SequencesRepo.leave")(function*(companyId, email, reason, now) {
        const rows = yield* sql`UPDATE sequence_executions SET status = 'skipped', error_message = ${reason}, ${unleased(now)}
          WHERE company_id = ${companyId} AND lower(email) = ${email.toLowerCase()}
            AND status IN ('draft', 'approved') AND send_started_at IS NULL
          RETURNING id`
        return rows.length
      }, Effect.orDie)
    } satisfies SequencesRepository
  }))

interface SequenceRow {
  readonly id: string
  readonly company_id: string
  readonly organization_id: string
  readonly user_id: string | null
  readonly name: string
  readonly steps: ReadonlyArray<SequenceStep>
  readonly list_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const sequenceFromRow = (row: SequenceRow): SequenceRecord => ({
  id: row.id,
  companyId: row.company_id,
  organizationId: row.organization_id,
  userId: row.user_id,
  name: row.name,
  steps: row.steps,
  listId: row.list_id,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

interface ExecutionRow {
  readonly id: string
  readonly sequence_id: string
  readonly company_id: string
  readonly organization_id: string
  readonly list_row_id: string
  readonly email: string
  readonly fields: Record<string, string>
  readonly step_index: number
  readonly status: ExecutionStatus
  readonly subject: string | null
  readonly body: string | null
  readonly error_message: string | null
  readonly due_at: Date
  readonly attempts: number
  readonly drafted_at: Date | null
  readonly approved_at: Date | null
  readonly send_started_at: Date | null
  readonly sent_at: Date | null
  readonly message_id: string | null
  readonly open_count: number
  readonly click_count: number
  readonly first_opened_at: Date | null
  readonly first_clicked_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

const dateOrNull = (value: Date | null) => (value === null ? null : new Date(value))

const executionFromRow = (row: ExecutionRow): ExecutionRecord => ({
  id: row.id,
  sequenceId: row.sequence_id,
  companyId: row.company_id,
  organizationId: row.organization_id,
  listRowId: row.list_row_id,
  email: row.email,
  fields: row.fields,
  stepIndex: row.step_index,
  status: row.status,
  subject: row.subject,
  body: row.body,
  errorMessage: row.error_message,
  dueAt: new Date(row.due_at),
  attempts: row.attempts,
  draftedAt: dateOrNull(row.drafted_at),
  approvedAt: dateOrNull(row.approved_at),
  sendStartedAt: dateOrNull(row.send_started_at),
  sentAt: dateOrNull(row.sent_at),
  messageId: row.message_id,
  openCount: row.open_count,
  clickCount: row.click_count,
  firstOpenedAt: dateOrNull(row.first_opened_at),
  firstClickedAt: dateOrNull(row.first_clicked_at),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

/** Rows per statement of an enrolment. */
const insertChunk = 5_000

const newExecutionRow = (execution: ExecutionRecord) => ({
  id: execution.id,
  sequence_id: execution.sequenceId,
  company_id: execution.companyId,
  organization_id: execution.organizationId,
  list_row_id: execution.listRowId,
  email: execution.email,
  fields: execution.fields,
  step_index: execution.stepIndex,
  due_at: execution.dueAt.toISOString(),
  created_at: execution.createdAt.toISOString()
})
