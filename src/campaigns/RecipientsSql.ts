import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { containing, toNumber } from "../storage/Rows.ts"
import type { RecipientStatus } from "./Api.ts"
import { fromRow as campaignFromRow, dateOrNull } from "./CampaignsSql.ts"
import { cancelledReason } from "./CampaignStates.ts"
import type { RecipientRecord, RecipientsRepository } from "./RecipientsRepo.ts"

/** The SQL backend of `RecipientsRepo` (PostgreSQL and PGlite). */
export const makeSqlRecipientsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
  const repository: RecipientsRepository = {
    startSending: Effect.fn("RecipientsRepo.startSending")(function*(campaign, from, listId, change, now) {
      // Ids: one time-sortable prefix per send plus the row's position, so that a send of
      // 100,000 rows is one INSERT … SELECT and "most recent first" is id order.
      const prefix = newId("rcp")
      const rows = yield* sql<Parameters<typeof campaignFromRow>[0]>`
        WITH moved AS (
          UPDATE campaigns SET
            status = 'sending',
            list_id = ${listId},
            scheduled_at = coalesce(${change.scheduledAt ?? null}::timestamptz, scheduled_at),
            started_at = ${now},
            lease_token = NULL,
            lease_expires_at = NULL,
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${campaign.companyId} AND id = ${campaign.id} AND status IN ${sql.in(from)}
          RETURNING *
        ), numbered AS (
          SELECT r.*, row_number() OVER (ORDER BY r.id) AS position,
            row_number() OVER (PARTITION BY r.email_key ORDER BY r.id) AS occurrence,
            s.reason AS suppressed
          FROM contact_list_rows r
          LEFT JOIN suppressions s ON s.company_id = ${campaign.companyId} AND s.email_key = r.email_key
          WHERE r.list_id = ${listId} AND EXISTS (SELECT 1 FROM moved)
        ), made AS (
          INSERT INTO campaign_recipients (id, campaign_id, company_id, list_row_id, email, fields, status, error_message,
            created_at, updated_at)
          SELECT ${prefix} || lpad(to_hex(position), 8, '0'), ${campaign.id}, ${campaign.companyId}, id, email,
            jsonb_strip_nulls(fields || jsonb_build_object('email', email, 'firstName', first_name, 'lastName', last_name,
              'company', company)),
            CASE WHEN suppressed IS NOT NULL OR occurrence > 1 THEN 'skipped' ELSE 'pending' END,
            CASE WHEN suppressed IS NOT NULL THEN 'Suppressed (' || suppressed || ')'
              WHEN occurrence > 1 THEN 'Duplicate address' END,
            ${now}, ${now}
          FROM numbered
        )
        SELECT * FROM moved`
      return Option.map(Option.fromNullishOr(rows[0]), campaignFromRow)
    }, Effect.orDie),
    page: Effect.fn("RecipientsRepo.page")(function*(campaignId, search, window) {
      const searching = search !== undefined && search !== ""
      const matches = searching ? sql`email ILIKE ${containing(search)}` : sql`true`
      const where = sql`campaign_id = ${campaignId} AND ${matches}`
      const [rows, aggregate] = yield* Effect.all([
        sql<RecipientRow>`SELECT * FROM campaign_recipients WHERE ${where} ORDER BY id DESC
          LIMIT ${window.limit} OFFSET ${window.offset}`,
        sql<Record<string, unknown>>`
          SELECT count(*) AS total,
            count(*) FILTER (WHERE status = 'sent') AS sent,
            count(*) FILTER (WHERE status = 'failed') AS failed,
            count(*) FILTER (WHERE status = 'skipped') AS skipped,
            count(*) FILTER (WHERE opened) AS opened,
            count(*) FILTER (WHERE clicked) AS clicked,
            count(*) FILTER (WHERE ${matches}) AS matching
          FROM campaign_recipients WHERE campaign_id = ${campaignId}`
      ], { concurrency: 2 })
      const row = aggregate[0]
      return {
        rows: rows.map(fromRow),
        total: toNumber(row.matching),
        counts: {
          total: toNumber(row.total),
          sent: toNumber(row.sent),
          failed: toNumber(row.failed),
          skipped: toNumber(row.skipped),
          opened: toNumber(row.opened),
          clicked: toNumber(row.clicked)
        }
      }
    }, Effect.orDie),
    cancel: Effect.fn("RecipientsRepo.cancel")(function*(companyId, id, from, now) {
      const rows = yield* sql<Parameters<typeof campaignFromRow>[0]>`
        WITH moved AS (
          UPDATE campaigns SET status = 'cancelled', lease_token = NULL, lease_expires_at = NULL,
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)}
          RETURNING *
        ), skipped AS (
          UPDATE campaign_recipients SET status = 'skipped', error_message = ${cancelledReason}, updated_at = ${now}
          WHERE campaign_id IN (SELECT id FROM moved) AND status = 'pending'
        )
        SELECT * FROM moved`
      return Option.map(Option.fromNullishOr(rows[0]), campaignFromRow)
    }, Effect.orDie),
    claim: Effect.fn("RecipientsRepo.claim")(function*(now, expiresAt, limit) {
      const token = newId("lease")
      const rows = yield* sql<RecipientRow>`
        UPDATE campaign_recipients SET lease_token = ${token}, lease_expires_at = ${expiresAt}
        WHERE id IN (
          SELECT r.id FROM campaign_recipients r
          WHERE r.status = 'pending'
            AND r.campaign_id IN (SELECT id FROM campaigns WHERE status = 'sending')
            AND (r.next_attempt_at IS NULL OR r.next_attempt_at <= ${now})
            AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= ${now})
          ORDER BY r.campaign_id, r.id
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ) AND status = 'pending' AND ${leaseFree(now)}
        RETURNING *`
      return { token, recipients: rows.map(fromRow).toSorted((a, b) => a.id.localeCompare(b.id)) }
    }, Effect.orDie),
    renew: Effect.fn("RecipientsRepo.renew")(function*(token, expiresAt) {
      const rows = yield* sql`UPDATE campaign_recipients SET lease_expires_at = ${expiresAt}
        WHERE lease_token = ${token} AND status = 'pending'
          AND campaign_id IN (SELECT id FROM campaigns WHERE status = 'sending')
        RETURNING id`
      return rows.length > 0
    }, Effect.orDie),
    release: Effect.fn("RecipientsRepo.release")(function*(token) {
      yield* sql`UPDATE campaign_recipients SET lease_token = NULL, lease_expires_at = NULL
        WHERE lease_token = ${token} AND status = 'pending'`
    }, Effect.orDie),
    record: Effect.fn("RecipientsRepo.record")(function*(id, token, outcome, maxAttempts, now) {
      const mine = sql`id = ${id} AND lease_token = ${token}`
      const done = sql`lease_token = NULL, lease_expires_at = NULL, updated_at = ${now}`
      const rows = outcome._tag === "Sent"
        // A message sent after a cancel is still recorded as sent: what happened wins.
        ? yield* sql`UPDATE campaign_recipients SET status = 'sent', sent_at = ${now}, message_id = ${outcome.messageId},
            error_message = NULL, ${done} WHERE ${mine} RETURNING id`
        : outcome._tag === "Failed"
        ? yield* sql`UPDATE campaign_recipients SET status = 'failed', error_message = ${outcome.error}, ${done}
            WHERE ${mine} AND status = 'pending' RETURNING id`
        : yield* sql`UPDATE campaign_recipients SET attempts = attempts + 1, error_message = ${outcome.error},
            status = CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'pending' END,
            next_attempt_at = ${outcome.at}, ${done}
            WHERE ${mine} AND status = 'pending' RETURNING id`
      return rows.length > 0
    }, Effect.orDie),
    completeFinished: Effect.fn("RecipientsRepo.completeFinished")(function*(now) {
      const rows = yield* sql<{ readonly id: string }>`
        UPDATE campaigns SET status = 'sent', completed_at = ${now},
          updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
        WHERE status = 'sending' AND NOT EXISTS (
          SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = campaigns.id AND r.status = 'pending'
        )
        RETURNING id`
      return rows.map((row) => row.id)
    }, Effect.orDie),
    get: Effect.fn("RecipientsRepo.get")(function*(id) {
      const rows = yield* sql<RecipientRow>`SELECT * FROM campaign_recipients WHERE id = ${id}`
      return Option.map(Option.fromNullishOr(rows[0]), fromRow)
    }, Effect.orDie),
    track: Effect.fn("RecipientsRepo.track")(function*(id, event, now) {
      yield* event === "open"
        ? sql`UPDATE campaign_recipients SET opened = true, open_count = open_count + 1,
            first_opened_at = coalesce(first_opened_at, ${now}), last_opened_at = ${now}, updated_at = ${now}
            WHERE id = ${id}`
        : sql`UPDATE campaign_recipients SET clicked = true, click_count = click_count + 1,
            first_clicked_at = coalesce(first_clicked_at, ${now}), last_clicked_at = ${now},
            opened = true, first_opened_at = coalesce(first_opened_at, ${now}), updated_at = ${now}
            WHERE id = ${id}`
    }, Effect.orDie)
  }
  return repository
})

interface RecipientRow {
  readonly id: string
  readonly campaign_id: string
  readonly company_id: string
  readonly list_row_id: string
  readonly email: string
  readonly fields: Record<string, string>
  readonly status: RecipientStatus
  readonly attempts: number
  readonly next_attempt_at: Date | null
  readonly message_id: string | null
  readonly sent_at: Date | null
  readonly error_message: string | null
  readonly opened: boolean
  readonly open_count: number
  readonly first_opened_at: Date | null
  readonly last_opened_at: Date | null
  readonly clicked: boolean
  readonly click_count: number
  readonly first_clicked_at: Date | null
  readonly last_clicked_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: RecipientRow): RecipientRecord => ({
  id: row.id,
  campaignId: row.campaign_id,
  companyId: row.company_id,
  listRowId: row.list_row_id,
  email: row.email,
  fields: row.fields,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: dateOrNull(row.next_attempt_at),
  messageId: row.message_id,
  sentAt: dateOrNull(row.sent_at),
  errorMessage: row.error_message,
  opened: row.opened,
  openCount: row.open_count,
  firstOpenedAt: dateOrNull(row.first_opened_at),
  lastOpenedAt: dateOrNull(row.last_opened_at),
  clicked: row.clicked,
  clickCount: row.click_count,
  firstClickedAt: dateOrNull(row.first_clicked_at),
  lastClickedAt: dateOrNull(row.last_clicked_at),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
