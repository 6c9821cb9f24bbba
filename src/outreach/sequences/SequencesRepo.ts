import { Context, Effect, Layer, Option } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { newId } from "../../platform/Ids.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectPage, type Window } from "../../storage/Windows.ts"
import { abandonedSendError, sequenceDeleted, unenrolledReason } from "./ExecutionStates.ts"
import {
  decodeExecutions,
  decodeSequences,
  type DraftOutcome,
  type ExecutionClaim,
  type ExecutionRecord,
  type ExecutionStatus,
  type SendResult,
  type SequenceChange,
  type SequenceRecord
} from "./SequenceRecords.ts"

/**
 * Sequences and their executions. Every API read is scoped by company id;
 * the workers' claims span all companies. Each worker records a result only
 * while its lease is still its own, so an execution is drafted once and sent
 * at most once whatever the number of workers.
 */
export class SequencesRepo extends Context.Service<SequencesRepo, {
  readonly create: (sequence: SequenceRecord) => Effect.Effect<SequenceRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<SequenceRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<SequenceRecord>; readonly total: number }>
  readonly update: (
    companyId: string,
    id: string,
    change: SequenceChange,
    now: Date
  ) => Effect.Effect<Option.Option<SequenceRecord>>
  /** Stores the executions whose (sequence, row, step) is new; answers how many. */
  readonly enroll: (executions: ReadonlyArray<ExecutionRecord>) => Effect.Effect<number>
  /** Newest first; `status` filters. */
  readonly executions: (
    sequenceId: string,
    status: ExecutionStatus | undefined,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ExecutionRecord>; readonly total: number }>
  /** The executions of the sequence among `ids`. */
  readonly executionsByIds: (sequenceId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ExecutionRecord>>
  readonly execution: (id: string) => Effect.Effect<Option.Option<ExecutionRecord>>
  /** The executions among `ids` (of any sequence), in one statement. */
  readonly executionsAmong: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ExecutionRecord>>
  /** Written, unapproved drafts among `ids` become approved; answers their ids. */
  readonly approve: (sequenceId: string, ids: ReadonlyArray<string>, now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** Failed executions among `ids` (and uncertain ones when asked) become fresh unwritten drafts; answers their ids. */
  readonly regenerate: (
    sequenceId: string,
    ids: ReadonlyArray<string>,
    includeUncertain: boolean,
    now: Date
  ) => Effect.Effect<ReadonlyArray<string>>
  /** Leases up to `limit` unwritten drafts. */
  readonly claimDrafts: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>
  /** Stores the model's draft (or its failure) if the lease is still `token`'s. */
  readonly recordDraft: (id: string, token: string, outcome: DraftOutcome, now: Date) => Effect.Effect<boolean>
  /** Sends abandoned by a dead worker (in flight, lease expired) become `uncertain`; answers their ids. */
  readonly abandonSends: (now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** Ends every unexpired lease at once (the process that held them is known dead); answers how many. */
  readonly reclaim: (now: Date) => Effect.Effect<number>
  /** Leases up to `limit` approved executions that are due and not in flight. */
  readonly claimSends: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ExecutionClaim>
  /** Marks the send as started (through `mailboxId`, when given) if the lease is still `token`'s; false: do not send. */
  readonly beginSend: (id: string, token: string, now: Date, mailboxId?: string) => Effect.Effect<boolean>
  /** Puts a due send off until `until` (not an attempt, not a failure) if the lease is still `token`'s. */
  readonly defer: (id: string, token: string, until: Date, reason: string, now: Date) => Effect.Effect<boolean>
  /**
   * Records a send's outcome if the lease is still `token`'s; a `Sent` stores
   * the contact's next execution with it. A retry past `maxAttempts` is `failed`.
   */
  readonly recordSend: (id: string, token: string, result: SendResult, maxAttempts: number, now: Date) => Effect.Effect<boolean>
  /** Counts an open or a click of the execution's e-mail. */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
  /** Extends a claim's lease; false when no execution of it is still held. */
  readonly renew: (token: string, expiresAt: Date) => Effect.Effect<boolean>
  /** Frees what is left of a claim. */
  readonly release: (token: string) => Effect.Effect<void>
  /** The contact leaves every sequence of the company: its drafts and approved executions become `skipped`; answers how many. */
  readonly leave: (companyId: string, email: string, reason: string, now: Date) => Effect.Effect<number>
  /** The contact replied: it leaves the company's sequences that stop on reply (as `leave`); answers how many executions stopped. */
  readonly leaveOnReply: (contacts: ReadonlyArray<{ readonly companyId: string; readonly email: string }>, now: Date) => Effect.Effect<number>
  /** The execution was answered (`replied`) or bounced (`bounced`); recorded once. */
  readonly mark: (ids: ReadonlyArray<string>, event: "replied" | "bounced", now: Date) => Effect.Effect<void>
  /**
   * Deletes the sequence and, in the same statement, skips its executions not sent nor being sent; sent
   * executions stay, so their e-mails' links keep working. None when there was no such sequence.
   */
  readonly remove: (companyId: string, id: string, now: Date) => Effect.Effect<Option.Option<SequenceRecord>>
  /** The contacts (by list row, or by address in any case) leave the sequence: as `leave`, in one sequence; answers how many contacts. */
  readonly unenroll: (
    sequenceId: string,
    contacts: { readonly rowIds: ReadonlyArray<string> } | { readonly emails: ReadonlyArray<string> },
    now: Date
  ) => Effect.Effect<number>
}>()("sequences/SequencesRepo") {
  static readonly layer = Layer.effect(SequencesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
    const mine = (id: string, token: string) => sql`id = ${id} AND lease_token = ${token}`
    const unleased = (now: Date) => sql`lease_token = NULL, lease_expires_at = NULL, updated_at = ${now}`
    /** Executions not sent and not being handed to the mail server. */
    const unsent = sql`status IN ('draft', 'approved') AND send_started_at IS NULL`
    const claim = (now: Date, expiresAt: Date, limit: number, due: Statement.Fragment) =>
      Effect.gen(function*() {
        const token = newId("lease")
        const rows = yield* leasedClaim(sql, {
          table: "sequence_executions",
          where: sql`${due} AND ${leaseFree(now)}`,
          orderBy: sql`id`,
          limit,
          lease: { token, until: expiresAt },
          returning: sql`sequence_executions.*`
        })
        return { token, executions: (yield* decodeExecutions(rows)).toSorted((a, b) => a.id.localeCompare(b.id)) }
      })
    /** New executions (unwritten drafts), a chunk per statement: one JSON parameter expanded by `jsonb_to_recordset`. */
    const insertExecutions = (executions: ReadonlyArray<ExecutionRecord>) =>
      Effect.gen(function*() {
        let added = 0
        for (let start = 0; start < executions.length; start += insertChunk) {
          const chunk = executions.slice(start, start + insertChunk).map(newExecutionRow)
          const rows = yield* sql`
            INSERT INTO sequence_executions (id, sequence_id, company_id, organization_id, list_row_id, email, fields,
              step_index, status, due_at, mailbox_id, created_at, updated_at)
            SELECT r.id, r.sequence_id, r.company_id, r.organization_id, r.list_row_id, r.email, r.fields, r.step_index,
              'draft', r.due_at, r.mailbox_id, r.created_at, r.created_at
            FROM jsonb_to_recordset(${jsonParam(chunk)}::jsonb) AS r(id text, sequence_id text, company_id text,
              organization_id text, list_row_id text, email text, fields jsonb, step_index integer, due_at timestamptz,
              mailbox_id text, created_at timestamptz)
            WHERE EXISTS (SELECT 1 FROM sequences s WHERE s.id = r.sequence_id)
            ON CONFLICT (sequence_id, list_row_id, step_index) DO NOTHING RETURNING id`
          added += rows.length
        }
        return added
      })

    return {
      create: Effect.fn("SequencesRepo.create")(function*(sequence) {
        const rows = yield* sql`
          INSERT INTO sequences (id, company_id, organization_id, user_id, name, steps, list_id, stop_on_reply, from_name, from_email,
            mailbox_ids, created_at, updated_at)
          VALUES (${sequence.id}, ${sequence.companyId}, ${sequence.organizationId}, ${sequence.userId}, ${sequence.name},
            ${jsonParam(sequence.steps)}::jsonb, ${sequence.listId}, ${sequence.stopOnReply}, ${sequence.fromName}, ${sequence.fromEmail},
            ${jsonParam(sequence.mailboxIds)}::jsonb, ${sequence.createdAt}, ${sequence.updatedAt})
          RETURNING *`
        return (yield* decodeSequences(rows))[0]
      }, Effect.orDie),
      get: Effect.fn("SequencesRepo.get")(function*(companyId, id) {
        const rows = yield* sql`SELECT * FROM sequences WHERE company_id = ${companyId} AND id = ${id}`
        return Option.fromNullishOr((yield* decodeSequences(rows))[0])
      }, Effect.orDie),
      list: Effect.fn("SequencesRepo.list")(function*(companyId, window) {
        const page = yield* selectPage(sql, "sequences", sql`company_id = ${companyId}`, window)
        return { rows: yield* decodeSequences(page.rows), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("SequencesRepo.update")(function*(companyId, id, change, now) {
        const rows = yield* sql`
          UPDATE sequences SET
            name = coalesce(${change.name ?? null}, name),
            steps = coalesce(${change.steps === undefined ? null : jsonParam(change.steps)}::jsonb, steps),
            list_id = coalesce(${change.listId ?? null}, list_id),
            stop_on_reply = coalesce(${change.stopOnReply ?? null}, stop_on_reply),
            mailbox_ids = coalesce(${change.mailboxIds === undefined ? null : jsonParam(change.mailboxIds)}::jsonb, mailbox_ids),
            from_name = CASE WHEN ${change.fromName !== undefined} THEN ${change.fromName ?? null} ELSE from_name END,
            from_email = CASE WHEN ${change.fromEmail !== undefined} THEN ${change.fromEmail ?? null} ELSE from_email END,
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.fromNullishOr((yield* decodeSequences(rows))[0])
      }, Effect.orDie),
      enroll: Effect.fn("SequencesRepo.enroll")(function*(executions) {
        return yield* insertExecutions(executions)
      }, Effect.orDie),
      executions: Effect.fn("SequencesRepo.executions")(function*(sequenceId, status, window) {
        const where = status === undefined
          ? sql`sequence_id = ${sequenceId}`
          : sql`sequence_id = ${sequenceId} AND status = ${status}`
        const page = yield* selectPage(sql, "sequence_executions", where, window)
        return { rows: yield* decodeExecutions(page.rows), total: page.total }
      }, Effect.orDie),
      executionsByIds: Effect.fn("SequencesRepo.executionsByIds")(function*(sequenceId, ids) {
        if (ids.length === 0) return []
        const rows = yield* sql`
          SELECT * FROM sequence_executions WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)}`
        return yield* decodeExecutions(rows)
      }, Effect.orDie),
      executionsAmong: Effect.fn("SequencesRepo.executionsAmong")(function*(ids) {
        if (ids.length === 0) return []
        const rows = yield* sql`SELECT * FROM sequence_executions WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(ids)}::jsonb)))`
        return yield* decodeExecutions(rows)
      }, Effect.orDie),
      execution: Effect.fn("SequencesRepo.execution")(function*(id) {
        const rows = yield* sql`SELECT * FROM sequence_executions WHERE id = ${id}`
        return Option.fromNullishOr((yield* decodeExecutions(rows))[0])
      }, Effect.orDie),
      approve: Effect.fn("SequencesRepo.approve")(function*(sequenceId, ids, now) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          UPDATE sequence_executions SET status = 'approved', approved_at = ${now}, updated_at = ${now}
          WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)} AND status = 'draft' AND drafted_at IS NOT NULL
          RETURNING id`
        return rows.map((row) => row.id)
      }, Effect.orDie),
      regenerate: Effect.fn("SequencesRepo.regenerate")(function*(sequenceId, ids, includeUncertain, now) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          UPDATE sequence_executions SET status = 'draft', subject = NULL, body = NULL, error_message = NULL,
            drafted_at = NULL, approved_at = NULL, send_started_at = NULL, attempts = 0, ${unleased(now)}
          WHERE sequence_id = ${sequenceId} AND ${sql.in("id", ids)}
            AND status IN ${sql.in(includeUncertain ? ["failed", "uncertain"] : ["failed"])}
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
        return yield* claim(now, expiresAt, limit, sql`status = 'approved' AND send_started_at IS NULL AND due_at <= ${now}`)
      }, Effect.orDie),
      abandonSends: Effect.fn("SequencesRepo.abandonSends")(function*(now) {
        const rows = yield* sql<{ readonly id: string }>`UPDATE sequence_executions
          SET status = 'uncertain', error_message = ${abandonedSendError}, ${unleased(now)}
          WHERE status = 'approved' AND send_started_at IS NOT NULL AND ${leaseFree(now)} RETURNING id`
        return rows.map((row) => row.id)
      }, Effect.orDie),
      reclaim: Effect.fn("SequencesRepo.reclaim")(function*(now) {
        const rows = yield* sql`UPDATE sequence_executions SET lease_expires_at = ${now}
          WHERE lease_token IS NOT NULL AND lease_expires_at > ${now} RETURNING id`
        return rows.length
      }, Effect.orDie),
      beginSend: Effect.fn("SequencesRepo.beginSend")(function*(id, token, now, mailboxId) {
        const rows = yield* sql`UPDATE sequence_executions SET send_started_at = ${now}, updated_at = ${now},
            mailbox_id = ${mailboxId === undefined ? sql`mailbox_id` : sql`${mailboxId}`}
          WHERE ${mine(id, token)} AND status = 'approved' AND send_started_at IS NULL AND lease_expires_at > ${now}
          RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      defer: Effect.fn("SequencesRepo.defer")(function*(id, token, until, reason, now) {
        const rows = yield* sql`UPDATE sequence_executions SET due_at = ${until}, error_message = ${reason}, ${unleased(now)}
          WHERE ${mine(id, token)} AND status = 'approved' AND send_started_at IS NULL RETURNING id`
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
            AND ${unsent}
          RETURNING id`
        return rows.length
      }, Effect.orDie),
      leaveOnReply: Effect.fn("SequencesRepo.leaveOnReply")(function*(contacts, now) {
        if (contacts.length === 0) return 0
        const rows = yield* sql`UPDATE sequence_executions SET status = 'skipped', error_message = ${"The contact replied"}, ${unleased(now)}
          FROM (SELECT DISTINCT c."companyId" AS company_id, lower(c.email) AS email_key
            FROM jsonb_to_recordset(${jsonParam(contacts)}::jsonb) AS c("companyId" text, email text)) AS replied
          WHERE sequence_executions.company_id = replied.company_id AND lower(sequence_executions.email) = replied.email_key AND ${unsent}
            AND sequence_id IN (SELECT id FROM sequences WHERE company_id = replied.company_id AND stop_on_reply)
          RETURNING sequence_executions.id`
        return rows.length
      }, Effect.orDie),
      mark: Effect.fn("SequencesRepo.mark")(function*(ids, event, now) {
        if (ids.length === 0) return
        const column = sql(event === "replied" ? "replied_at" : "bounced_at")
        yield* sql`UPDATE sequence_executions SET ${column} = ${now}, updated_at = ${now}
          WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(ids)}::jsonb))) AND ${column} IS NULL`
      }, Effect.orDie),
      remove: Effect.fn("SequencesRepo.remove")(function*(companyId, id, now) {
        const rows = yield* sql`
          WITH removed AS (
            DELETE FROM sequences WHERE company_id = ${companyId} AND id = ${id} RETURNING *
          ), stopped AS (
            UPDATE sequence_executions SET status = 'skipped', error_message = ${sequenceDeleted}, ${unleased(now)}
            WHERE sequence_id IN (SELECT id FROM removed) AND ${unsent}
          )
          SELECT * FROM removed`
        return Option.fromNullishOr((yield* decodeSequences(rows))[0])
      }, Effect.orDie),
      unenroll: Effect.fn("SequencesRepo.unenroll")(function*(sequenceId, contacts, now) {
        const which = "rowIds" in contacts
          ? sql`list_row_id IN ${sql.in(contacts.rowIds)}`
          : sql`lower(email) IN ${sql.in(contacts.emails.map((email) => email.toLowerCase()))}`
        const rows = yield* sql<{ readonly list_row_id: string }>`
          UPDATE sequence_executions SET status = 'skipped', error_message = ${unenrolledReason}, ${unleased(now)}
          WHERE sequence_id = ${sequenceId} AND ${which} AND ${unsent}
          RETURNING list_row_id`
        return new Set(rows.map((row) => row.list_row_id)).size
      }, Effect.orDie)
    }
  }))
}

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
  mailbox_id: execution.mailboxId,
  created_at: execution.createdAt.toISOString()
})
