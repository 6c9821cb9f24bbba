import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf } from "../storage/Columns.ts"
import { outboxOn } from "../storage/Outbox.ts"
import type { DeliveryOutcome } from "../outreach/Delivery.ts"
import { newId } from "../platform/Ids.ts"
import { containing } from "../storage/Rows.ts"
import type { Window } from "../storage/Windows.ts"
import { RecipientStatus } from "./Api.ts"
import { type CampaignRecord, decodeCampaign, type MoveChange } from "./CampaignsRepo.ts"
import { cancelledReason, uncertainReason } from "./CampaignStates.ts"

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
  total: NumberColumn,
  sent: NumberColumn,
  failed: NumberColumn,
  skipped: NumberColumn,
  uncertain: NumberColumn,
  opened: NumberColumn,
  clicked: NumberColumn
})
const decodeMetrics = Schema.decodeUnknownEffect(MetricRow)
const noRecipients: typeof MetricRow.Type = { total: 0, sent: 0, failed: 0, skipped: 0, uncertain: 0, opened: 0, clicked: 0 }

export interface RecipientMetricCounts {
  readonly total: number
  readonly sent: number
  readonly failed: number
  readonly skipped: number
  readonly uncertain: number
  readonly opened: number
  readonly clicked: number
}

/** Recipients leased to one worker until `expiresAt`; only the `token` holder may record them. */
export interface RecipientClaim {
  readonly token: string
  readonly recipients: ReadonlyArray<RecipientRecord>
}

/** A campaign `completeFinished` ended, with its recipients' counts. */
const FinishedCampaign = fromColumns(Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  status: Schema.String,
  sent: NumberColumn,
  failed: NumberColumn
}))

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
   * contains `search` (any case), how many match (a trigram index serves the
   * search), and the counts over every recipient of the campaign (kept in
   * `campaign_recipient_counts` by every statement that moves recipients).
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
  /** Records the recipient as in flight (about to be handed to the mail server) while `token` holds it; false: do not send. */
  readonly begin: (id: string, token: string, now: Date) => Effect.Effect<boolean>
  /**
   * Recipients left in flight by a worker whose lease ran out (it died between handing the message over
   * and recording the answer) become `uncertain`: maybe delivered, never sent again by itself. Answers them.
   */
  readonly abandon: (now: Date) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly leaseToken: string }>>
  /** Ends every unexpired lease at once (the process that held them is known dead); answers how many. */
  readonly reclaim: (now: Date) => Effect.Effect<number>
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
  /**
   * `sending` campaigns with no pending recipient become `sent` with `completedAt`, or `failed` with an
   * `errorMessage` when every recipient tried failed (none sent); answers their ids.
   */
  readonly completeFinished: (now: Date) => Effect.Effect<ReadonlyArray<string>>
  /** A recipient by id (for tracking links). */
  readonly get: (id: string) => Effect.Effect<Option.Option<RecipientRecord>>
  /** Records the `recipient.bounced` event of a hard bounce (in the caller's transaction, which records the failure). */
  readonly bounced: (recipient: RecipientRecord, reason: string, now: Date) => Effect.Effect<void>
  /** Counts an open (`open`) or a click (`click`, which also counts as an open). */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
}>()("campaigns/RecipientsRepo") {
  static readonly layer = Layer.effect(RecipientsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = outboxOn(sql)
    const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
    /**
     * Keeps `campaign_recipient_counts` in the statement that moves recipients: a CTE over `changed`
     * (`campaign_id`, new `status`, old `was`), one row per recipient moved.
     */
    const bucket = (name: string) => sql`sum((status = ${name})::int - (was = ${name})::int)`
    const statusCounted = sql`counted AS (
      UPDATE campaign_recipient_counts c SET sent = c.sent + d.sent, failed = c.failed + d.failed,
        skipped = c.skipped + d.skipped, uncertain = c.uncertain + d.uncertain
      FROM (SELECT campaign_id, ${bucket("sent")} AS sent, ${bucket("failed")} AS failed, ${bucket("skipped")} AS skipped,
          ${bucket("uncertain")} AS uncertain
        FROM changed GROUP BY campaign_id) d
      WHERE c.campaign_id = d.campaign_id
    )`
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
            RETURNING status
          ), counted AS (
            INSERT INTO campaign_recipient_counts (campaign_id, total, skipped)
            SELECT ${campaign.id}, count(*), count(*) FILTER (WHERE status = 'skipped') FROM made
            WHERE EXISTS (SELECT 1 FROM moved)
            ON CONFLICT (campaign_id) DO UPDATE SET total = campaign_recipient_counts.total + excluded.total,
              skipped = campaign_recipient_counts.skipped + excluded.skipped
          )
          SELECT * FROM moved`
        return yield* decodeCampaign(rows)
      }, Effect.orDie),
      page: Effect.fn("RecipientsRepo.page")(function*(campaignId, search, window) {
        const searching = search !== undefined && search !== ""
        const matches = searching ? sql`email ILIKE ${containing(search)}` : sql`true`
        const where = sql`campaign_id = ${campaignId} AND ${matches}`
        const [rows, counted, matching] = yield* Effect.all([
          sql`SELECT * FROM campaign_recipients WHERE ${where} ORDER BY id DESC
            LIMIT ${window.limit} OFFSET ${window.offset}`,
          sql`SELECT total, sent, failed, skipped, uncertain, opened, clicked FROM campaign_recipient_counts
            WHERE campaign_id = ${campaignId}`,
          searching ? sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM campaign_recipients WHERE ${where}` : Effect.succeed([])
        ], { concurrency: 3 })
        const counts = counted.length === 0 ? noRecipients : yield* decodeMetrics(counted[0])
        return { rows: yield* decodeRecipients(rows), total: searching ? matching[0].n : counts.total, counts }
      }, Effect.orDie),
      cancel: Effect.fn("RecipientsRepo.cancel")(function*(companyId, id, from, now) {
        const rows = yield* sql`
          WITH moved AS (
            UPDATE campaigns SET status = 'cancelled', lease_token = NULL, lease_expires_at = NULL,
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)}
            RETURNING *
          ), changed AS (
            UPDATE campaign_recipients SET status = 'skipped', error_message = ${cancelledReason}, updated_at = ${now}
            WHERE campaign_id IN (SELECT id FROM moved) AND status = 'pending'
            RETURNING campaign_id, status, 'pending' AS was
          ), ${statusCounted}
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
      begin: Effect.fn("RecipientsRepo.begin")(function*(id, token, now) {
        const rows = yield* sql`UPDATE campaign_recipients SET send_started_at = ${now}
          WHERE id = ${id} AND lease_token = ${token} AND status = 'pending' AND lease_expires_at > ${now}
          RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      abandon: Effect.fn("RecipientsRepo.abandon")(function*(now) {
        return yield* sql<{ readonly id: string; readonly lease_token: string }>`
          WITH changed AS (
            UPDATE campaign_recipients SET status = 'uncertain', error_message = ${uncertainReason},
              lease_token = NULL, lease_expires_at = NULL, updated_at = ${now}
            FROM (SELECT id, lease_token AS held FROM campaign_recipients
              WHERE status = 'pending' AND send_started_at IS NOT NULL AND lease_expires_at <= ${now}
              FOR UPDATE SKIP LOCKED) AS abandoned
            WHERE campaign_recipients.id = abandoned.id
            RETURNING campaign_recipients.id, campaign_id, status, 'pending' AS was, abandoned.held
          ), ${statusCounted}
          SELECT id, held AS lease_token FROM changed`.pipe(
          Effect.map((rows) => rows.map((row) => ({ id: row.id, leaseToken: row.lease_token })))
        )
      }, Effect.orDie),
      reclaim: Effect.fn("RecipientsRepo.reclaim")(function*(now) {
        const [recipients, campaigns] = yield* Effect.all([
          sql`UPDATE campaign_recipients SET lease_expires_at = ${now}
            WHERE lease_token IS NOT NULL AND lease_expires_at > ${now} RETURNING id`,
          sql`UPDATE campaigns SET lease_expires_at = ${now} WHERE lease_token IS NOT NULL AND lease_expires_at > ${now} RETURNING id`
        ])
        return recipients.length + campaigns.length
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
          WHERE lease_token = ${token} AND status = 'pending' AND send_started_at IS NULL`
      }, Effect.orDie),
      record: Effect.fn("RecipientsRepo.record")(function*(id, token, outcome, maxAttempts, now) {
        const done = sql`lease_token = NULL, lease_expires_at = NULL, send_started_at = NULL, updated_at = ${now}`
        const change = outcome._tag === "Sent"
          // A message sent after a cancel is still recorded as sent: what happened wins.
          ? sql`status = 'sent', sent_at = ${now}, message_id = ${outcome.messageId}, error_message = NULL, ${done}`
          : outcome._tag === "Failed"
          ? sql`status = 'failed', error_message = ${outcome.error}, ${done}`
          : sql`attempts = r.attempts + 1, error_message = ${outcome.error},
              status = CASE WHEN r.attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'pending' END,
              next_attempt_at = ${outcome.at}, ${done}`
        const from = outcome._tag === "Sent" ? sql`true` : sql`old.was = 'pending'`
        const rows = yield* sql`
          WITH old AS (
            SELECT id, status AS was FROM campaign_recipients WHERE id = ${id} AND lease_token = ${token} FOR UPDATE
          ), changed AS (
            UPDATE campaign_recipients r SET ${change} FROM old WHERE r.id = old.id AND ${from}
            RETURNING r.campaign_id, r.status, old.was
          ), ${statusCounted}
          SELECT 1 FROM changed`
        return rows.length > 0
      }, Effect.orDie),
      completeFinished: Effect.fn("RecipientsRepo.completeFinished")(function*(now) {
        // Sent, unless every recipient it tried failed: then failed, with the most common reason.
        // A sent campaign's `campaign.sent` event commits with its status.
        const rows = yield* readerOf(FinishedCampaign).all(sql`
          WITH finished AS (
            SELECT c.id,
              count(r.id) FILTER (WHERE r.status = 'sent') AS sent,
              count(r.id) FILTER (WHERE r.status = 'failed') AS failed,
              mode() WITHIN GROUP (ORDER BY r.error_message) FILTER (WHERE r.status = 'failed') AS reason
            FROM campaigns c LEFT JOIN campaign_recipients r ON r.campaign_id = c.id
            WHERE c.status = 'sending' AND NOT EXISTS (
              SELECT 1 FROM campaign_recipients p WHERE p.campaign_id = c.id AND p.status = 'pending'
            )
            GROUP BY c.id
          )
          UPDATE campaigns SET
            status = CASE WHEN f.sent = 0 AND f.failed > 0 THEN 'failed' ELSE 'sent' END,
            error_message = CASE WHEN f.sent = 0 AND f.failed > 0
              THEN 'Every recipient failed (' || f.failed || '); the most common reason: ' || coalesce(f.reason, 'unknown')
              END,
            completed_at = ${now},
            updated_at = greatest(${now}::timestamptz, campaigns.updated_at + interval '1 millisecond')
          FROM finished f
          WHERE campaigns.id = f.id AND campaigns.status = 'sending'
          RETURNING campaigns.id, campaigns.company_id, campaigns.name, campaigns.status, f.sent, f.failed`)
        yield* outbox.emitAll(rows.filter((row) => row.status === "sent").map((row) => ({
          companyId: row.companyId,
          type: "campaign.sent",
          payload: { campaignId: row.id, name: row.name, sent: row.sent, failed: row.failed, completedAt: now.toISOString() }
        })))
        return rows.map((row) => row.id)
      }, sql.withTransaction, Effect.orDie),
      bounced: (recipient, reason, now) =>
        outbox.emit(recipient.companyId, "recipient.bounced", {
          campaignId: recipient.campaignId,
          recipientId: recipient.id,
          email: recipient.email,
          reason,
          at: now.toISOString()
        }),
      get: Effect.fn("RecipientsRepo.get")(function*(id) {
        const rows = yield* sql`SELECT * FROM campaign_recipients WHERE id = ${id}`
        return Option.fromNullishOr((yield* decodeRecipients(rows))[0])
      }, Effect.orDie),
      track: Effect.fn("RecipientsRepo.track")(function*(id, event, now) {
        const click = event === "click"
        const change = click
          ? sql`clicked = true, click_count = click_count + 1, first_clicked_at = coalesce(first_clicked_at, ${now}),
              last_clicked_at = ${now}, opened = true, first_opened_at = coalesce(first_opened_at, ${now})`
          : sql`opened = true, open_count = open_count + 1, first_opened_at = coalesce(first_opened_at, ${now}),
              last_opened_at = ${now}`
        // The first open (and first click) of a recipient counts once in the campaign's metrics.
        yield* sql`
          WITH old AS (
            SELECT id, opened AS was_opened, clicked AS was_clicked FROM campaign_recipients WHERE id = ${id} FOR UPDATE
          ), changed AS (
            UPDATE campaign_recipients r SET ${change}, updated_at = ${now} FROM old WHERE r.id = old.id
            RETURNING r.campaign_id, r.opened, r.clicked, old.was_opened, old.was_clicked
          )
          UPDATE campaign_recipient_counts c SET
            opened = c.opened + (changed.opened AND NOT changed.was_opened)::int,
            clicked = c.clicked + (changed.clicked AND NOT changed.was_clicked)::int
          FROM changed WHERE c.campaign_id = changed.campaign_id`
      }, Effect.orDie)
    }
  }))
}
