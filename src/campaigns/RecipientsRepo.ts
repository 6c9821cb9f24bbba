import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Count, fromColumns } from "../outreach/Rows.ts"
import { newId } from "../platform/Ids.ts"
import { containing } from "../storage/Rows.ts"
import type { Window } from "../storage/Windows.ts"
import { RecipientStatus } from "./Api.ts"
import { type CampaignRecord, decodeCampaign, type MoveChange } from "./CampaignsRepo.ts"
import { cancelledReason } from "./CampaignStates.ts"

export const RecipientRecord = Schema.Struct({
  id: Schema.String,
  campaignId: Schema.String,
  companyId: Schema.String,
  listRowId: Schema.String,
  email: Schema.String,
  /** The row's merge fields when sending started (`email`, `firstName`, … and any further column). */
  fields: Schema.Record(Schema.String, Schema.String),
  status: RecipientStatus,
  /** Deliveries that failed temporarily (SMTP 4xx, connection errors). */
  attempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.Date),
  messageId: Schema.NullOr(Schema.String),
  sentAt: Schema.NullOr(Schema.Date),
  errorMessage: Schema.NullOr(Schema.String),
  opened: Schema.Boolean,
  openCount: Schema.Number,
  firstOpenedAt: Schema.NullOr(Schema.Date),
  lastOpenedAt: Schema.NullOr(Schema.Date),
  clicked: Schema.Boolean,
  clickCount: Schema.Number,
  firstClickedAt: Schema.NullOr(Schema.Date),
  lastClickedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type RecipientRecord = typeof RecipientRecord.Type
const Recipients = Schema.Array(fromColumns(RecipientRecord))
const decodeRecipients = Schema.decodeUnknownEffect(Recipients)

const MetricRow = Schema.Struct({
  total: Count,
  sent: Count,
  failed: Count,
  skipped: Count,
  opened: Count,
  clicked: Count,
  matching: Count
})
const decodeMetrics = Schema.decodeUnknownEffect(MetricRow)

export interface RecipientMetricCounts {
  readonly total: number
  readonly sent: number
  readonly failed: number
  readonly skipped: number
  readonly opened: number
  readonly clicked: number
}

/** Recipients leased to one worker until `expiresAt`; only the `token` holder may record them. */
export interface RecipientClaim {
  readonly token: string
  readonly recipients: ReadonlyArray<RecipientRecord>
}

/** What a delivery attempt came to. */
export type DeliveryOutcome =
  | { readonly _tag: "Sent"; readonly messageId: string }
  | { readonly _tag: "Retry"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly error: string }

/**
 * Recipients of campaigns: made in bulk when sending starts, delivered by
 * the sending worker under leases, and updated by tracking.
 */
export class RecipientsRepo extends Context.Service<RecipientsRepo, {
  /**
   * Moves the campaign from `from` to `sending` with `change` and, in the same
   * transaction, makes one recipient per row of `listId`: `pending`, or
   * `skipped` when the address is on the company's suppression list or
   * repeats an earlier row. None when the campaign was no longer in `from`.
   */
  readonly startSending: (
    campaign: CampaignRecord,
    from: ReadonlyArray<CampaignRecord["status"]>,
    listId: string,
    change: MoveChange,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * A window of the campaign's recipients, most recent first, whose e-mail
   * contains `search` (any case), how many match,
   * and the counts over every recipient of the campaign (one pass for both).
   */
  readonly page: (
    campaignId: string,
    search: string | undefined,
    window: Window
  ) => Effect.Effect<{
    readonly rows: ReadonlyArray<RecipientRecord>
    readonly total: number
    readonly counts: RecipientMetricCounts
  }>
  /**
   * Moves the campaign from `from` to `cancelled` and, in the same
   * transaction, makes every recipient still pending `skipped`. None when the
   * campaign was no longer in `from`.
   */
  readonly cancel: (
    companyId: string,
    id: string,
    from: ReadonlyArray<CampaignRecord["status"]>,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * Leases up to `limit` pending recipients of `sending` campaigns that are due
   * (no retry wait left) and not under another unexpired lease.
   */
  readonly claim: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<RecipientClaim>
  /** Extends the lease of the claim's still-pending recipients whose campaign is still sending; false when none. */
  readonly renew: (token: string, expiresAt: Date) => Effect.Effect<boolean>
  /** Gives up the lease on the claim's recipients not recorded yet. */
  readonly release: (token: string) => Effect.Effect<void>
  /**
   * Records a delivery attempt, only while `token` still holds the
   * recipient's lease (checked in the same statement); false otherwise.
   * `Retry` past `maxAttempts` becomes `failed`.
   */
  readonly record: (
    id: string,
    token: string,
    outcome: DeliveryOutcome,
    maxAttempts: number,
    now: Date
  ) => Effect.Effect<boolean>
  /** `sending` campaigns with no pending recipient become `sent` with `completedAt`; answers their ids. */
  readonly completeFinished: (now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** A recipient by id (for tracking links). */
  readonly get: (id: string) => Effect.Effect<Option.Option<RecipientRecord>>
  /** Counts an open (`open`) or a click (`click`, which also counts as an open). */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
}>()("campaigns/RecipientsRepo") {
  static readonly layer = Layer.effect(RecipientsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
    return {
      startSending: Effect.fn("RecipientsRepo.startSending")(function*(campaign, from, listId, change, now) {
        // Ids: one time-sortable prefix per send plus the row's position, so that a send of
        // 100,000 rows is one INSERT … SELECT and "most recent first" is id order.
        const prefix = newId("rcp")
        const rows = yield* sql`
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
        return yield* decodeCampaign(rows)
      }, Effect.orDie),
      page: Effect.fn("RecipientsRepo.page")(function*(campaignId, search, window) {
        const searching = search !== undefined && search !== ""
        const matches = searching ? sql`email ILIKE ${containing(search)}` : sql`true`
        const where = sql`campaign_id = ${campaignId} AND ${matches}`
        const [rows, aggregate] = yield* Effect.all([
          sql`SELECT * FROM campaign_recipients WHERE ${where} ORDER BY id DESC
            LIMIT ${window.limit} OFFSET ${window.offset}`,
          sql`
            SELECT count(*) AS total,
              count(*) FILTER (WHERE status = 'sent') AS sent,
              count(*) FILTER (WHERE status = 'failed') AS failed,
              count(*) FILTER (WHERE status = 'skipped') AS skipped,
              count(*) FILTER (WHERE opened) AS opened,
              count(*) FILTER (WHERE clicked) AS clicked,
              count(*) FILTER (WHERE ${matches}) AS matching
            FROM campaign_recipients WHERE campaign_id = ${campaignId}`
        ], { concurrency: 2 })
        const { matching, ...counts } = yield* decodeMetrics(aggregate[0])
        return { rows: yield* decodeRecipients(rows), total: matching, counts }
      }, Effect.orDie),
      cancel: Effect.fn("RecipientsRepo.cancel")(function*(companyId, id, from, now) {
        const rows = yield* sql`
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
        return yield* decodeCampaign(rows)
      }, Effect.orDie),
      claim: Effect.fn("RecipientsRepo.claim")(function*(now, expiresAt, limit) {
        const token = newId("lease")
        const rows = yield* sql`
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
        return { token, recipients: (yield* decodeRecipients(rows)).toSorted((a, b) => a.id.localeCompare(b.id)) }
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
        const rows = yield* sql`SELECT * FROM campaign_recipients WHERE id = ${id}`
        return Option.fromNullishOr((yield* decodeRecipients(rows))[0])
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
  }))
}
