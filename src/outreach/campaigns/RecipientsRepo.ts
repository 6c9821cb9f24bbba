import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { NumberColumn } from "../../storage/Columns.ts"
import { outboxOn } from "../../storage/Outbox.ts"
import { tableStatistics } from "../../storage/Statistics.ts"
import { newId } from "../../platform/Ids.ts"
import { containing, jsonParam, toNumber } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import type { LeadFilter } from "../leads/Filter.ts"
import { matchingLeads } from "../leads/SmartListsRepo.ts"
import { type CampaignRecord, decodeCampaign, type MoveChange, type RecipientSource } from "./CampaignsRepo.ts"
import { cancelledReason } from "./CampaignStates.ts"
import { type RecipientLeases, recipientLeases } from "./RecipientLeases.ts"
import { type ClaimedRecipient, decodeRecipients, type RecipientRecord, statusCounted } from "./RecipientRecord.ts"

const MetricRow = Schema.Struct({
  total: NumberColumn,
  sent: NumberColumn,
  failed: NumberColumn,
  skipped: NumberColumn,
  uncertain: NumberColumn,
  opened: NumberColumn,
  clicked: NumberColumn,
  replied: NumberColumn,
  bounced: NumberColumn
})
const decodeMetrics = Schema.decodeUnknownEffect(MetricRow)
const noRecipients: RecipientMetricCounts = { total: 0, sent: 0, failed: 0, skipped: 0, uncertain: 0, opened: 0, clicked: 0, replied: 0, bounced: 0 }

export type RecipientMetricCounts = typeof MetricRow.Type

/** Whom a send goes to: a contact list, or a smart list with its decoded filter. */
export interface Recipients {
  readonly source: RecipientSource
  readonly filter: LeadFilter | null
}


/**
 * Recipients of campaigns: made in bulk when sending starts, delivered by
 * the sending worker under leases (`RecipientLeases`), and updated by tracking.
 */
export class RecipientsRepo extends Context.Service<RecipientsRepo, RecipientLeases & {
  /**
   * Moves the campaign from `from` to `sending` with `change` and, in the same
   * transaction, makes one recipient per row of the list (or per lead the
   * smart list's filter matches now): `pending`, or `skipped` when the address
   * is on the company's suppression list or repeats an earlier row. None when
   * the campaign was no longer in `from`.
   */
  readonly startSending: (
    campaign: CampaignRecord,
    from: ReadonlyArray<CampaignRecord["status"]>,
    recipients: Recipients,
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
  /** A recipient by id (for tracking links). */
  readonly get: (id: string) => Effect.Effect<Option.Option<RecipientRecord>>
  /** The recipients among `ids`, in one statement. */
  readonly getAll: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<RecipientRecord>>
  /** Records the `recipient.bounced` event of a hard bounce (in the caller's transaction, which records the failure). */
  readonly bounced: (recipient: ClaimedRecipient, reason: string, now: Date) => Effect.Effect<void>
  /** Counts an open (`open`) or a click (`click`, which also counts as an open). */
  readonly track: (id: string, event: "open" | "click", now: Date) => Effect.Effect<void>
  /** The recipient replied (`replied`) or bounced (`bounced`): recorded once, and counted once in the campaign's metrics. */
  readonly mark: (ids: ReadonlyArray<string>, event: "replied" | "bounced", now: Date) => Effect.Effect<void>
}>()("campaigns/RecipientsRepo") {
  static readonly layer = Layer.effect(RecipientsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = outboxOn(sql)
    const countsKept = statusCounted(sql)
    // The columns the recipients page filters on: without statistics the embedded database walks a campaign's
    // page index looking for a search's few matches instead of using the trigram index.
    const recipientStatistics = tableStatistics(sql, "campaign_recipients", ["campaign_id", "email", "status"])
    return {
      ...recipientLeases(sql),
      startSending: Effect.fn("RecipientsRepo.startSending")(function*(campaign, from, recipients, change, now) {
        const { source, filter } = recipients
        // A smart list's leads, shaped as list rows: their string custom fields are merge fields.
        const people = filter === null
          ? sql`(SELECT * FROM contact_list_rows WHERE list_id = ${source.listId})`
          : sql`(SELECT id, email, lower(email) AS email_key, first_name, last_name, company,
              (SELECT coalesce(jsonb_object_agg(f.key, f.value), '{}'::jsonb) FROM jsonb_each(leads.fields) AS f
                WHERE jsonb_typeof(f.value) = 'string') AS fields
              FROM ${matchingLeads(sql, campaign.companyId, filter, now)} AS leads)`
        // Ids: one time-sortable prefix per send plus the row's position, so that a send of
        // 100,000 rows is one INSERT … SELECT and "most recent first" is id order.
        const prefix = newId("rcp")
        const rows = yield* sql`
          WITH moved AS (
            UPDATE campaigns SET
              status = 'sending',
              list_id = ${source.listId},
              smart_list_id = ${source.smartListId},
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
            FROM ${people} r
            LEFT JOIN suppressions s ON s.company_id = ${campaign.companyId} AND s.email_key = r.email_key
            WHERE EXISTS (SELECT 1 FROM moved)
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
          SELECT moved.*, (SELECT count(*) FROM made) AS recipients_made FROM moved`
        yield* recipientStatistics.written(toNumber(rows[0]?.recipients_made))
        return yield* decodeCampaign(rows)
      }, Effect.orDie),
      page: Effect.fn("RecipientsRepo.page")(function*(campaignId, search, window) {
        const searching = search !== undefined && search !== ""
        const matches = searching ? sql`email ILIKE ${containing(search)}` : sql`true`
        const where = sql`campaign_id = ${campaignId} AND ${matches}`
        const [rows, counted, matching] = yield* Effect.all([
          sql`SELECT * FROM campaign_recipients WHERE ${where} ORDER BY id DESC
            LIMIT ${window.limit} OFFSET ${window.offset}`,
          sql`SELECT total, sent, failed, skipped, uncertain, opened, clicked, replied, bounced FROM campaign_recipient_counts
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
          ), ${countsKept}
          SELECT * FROM moved`
        return yield* decodeCampaign(rows)
      }, Effect.orDie),
      bounced: (recipient, reason, now) =>
        outbox.emit(recipient.companyId, "recipient.bounced", {
          campaignId: recipient.campaignId,
          recipientId: recipient.id,
          email: recipient.email,
          reason,
          at: now.toISOString()
        }),
      getAll: Effect.fn("RecipientsRepo.getAll")(function*(ids) {
        if (ids.length === 0) return []
        const rows = yield* sql`SELECT * FROM campaign_recipients WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(ids)}::jsonb)))`
        return yield* decodeRecipients(rows)
      }, Effect.orDie),
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
      }, Effect.orDie),
      mark: Effect.fn("RecipientsRepo.mark")(function*(ids, event, now) {
        if (ids.length === 0) return
        const column = sql(event === "replied" ? "replied_at" : "bounced_at")
        yield* sql`
          WITH changed AS (
            UPDATE campaign_recipients SET ${column} = ${now}, updated_at = ${now}
            WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(ids)}::jsonb))) AND ${column} IS NULL RETURNING campaign_id
          ), per_campaign AS (
            SELECT campaign_id, count(*)::int AS n FROM changed GROUP BY campaign_id
          )
          UPDATE campaign_recipient_counts c SET ${sql(event)} = c.${sql(event)} + per_campaign.n
          FROM per_campaign WHERE c.campaign_id = per_campaign.campaign_id`
      }, Effect.orDie)
    }
  }))
}
