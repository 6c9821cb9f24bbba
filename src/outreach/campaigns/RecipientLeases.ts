import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf } from "../../storage/Columns.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { outboxOn } from "../../storage/Outbox.ts"
import { jsonParam } from "../../storage/Rows.ts"
import type { DeliveryOutcome } from "../messages/Delivery.ts"
import { newId } from "../../platform/Ids.ts"
import { uncertainReason } from "./CampaignStates.ts"
import { decodeRecipients, type RecipientRecord, statusCounted } from "./RecipientRecord.ts"

/**
 * What the sending worker does with campaign recipients, under leases: claims
 * them in batches, records each as in flight and then its outcome (each only
 * while its lease is the worker's own), renews and releases the leases, takes
 * over what a dead worker left, and ends the campaigns with nothing pending.
 * Part of `RecipientsRepo`.
 */

/** Recipients leased to one worker until `expiresAt`; only the `token` holder may record them. */
export interface RecipientClaim {
  readonly token: string
  readonly recipients: ReadonlyArray<RecipientRecord>
}

/**
 * One write about a leased recipient, at `at`: `Begin` records it as in flight (about to be handed to the mail
 * server), an outcome records the delivery attempt. Each applies only while `token` holds the recipient's lease.
 */
export interface LeaseWrite {
  readonly id: string
  readonly token: string
  readonly at: Date
  readonly change: { readonly _tag: "Begin" } | DeliveryOutcome
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

/** The sender's statements (see above). */
export interface RecipientLeases {
  /**
   * Leases up to `limit` pending recipients of `sending` campaigns that are due
   * (no retry wait left) and not under another unexpired lease.
   */
  readonly claim: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<RecipientClaim>
  /** Records the recipient as in flight (about to be handed to the mail server) while `token` holds it; false: do not send. */
  readonly begin: (id: string, token: string, now: Date) => Effect.Effect<boolean>
  /**
   * `begin`s and `record`s of several recipients in one statement (a group commit's); answers, per write in
   * order, whether it applied (`begin`: the recipient may be sent; an outcome: it was recorded).
   */
  readonly write: (writes: ReadonlyArray<LeaseWrite>, maxAttempts: number) => Effect.Effect<ReadonlyArray<boolean>>
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
}

export const recipientLeases = (sql: SqlClient.SqlClient): RecipientLeases => {
  const outbox = outboxOn(sql)
  const leaseFree = (now: Date) => sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
  const countsKept = statusCounted(sql)
  /**
   * Per write: a `Begin` sets `send_started_at` on a pending recipient whose lease has not ended; `Sent`
   * records even a recipient cancelled meanwhile (what happened wins); `Failed` and `Retry` (failed past
   * `maxAttempts`) only a pending one. The old statuses, read under lock, keep the campaigns' counts.
   */
  const write = Effect.fn("RecipientsRepo.write")(function*(writes: ReadonlyArray<LeaseWrite>, maxAttempts: number) {
    if (writes.length === 0) return []
    // Looked up one by one by primary key (a join could scan every leased row), in id order: the order rows are locked in.
    const input = writes.toSorted((a, b) => a.id.localeCompare(b.id)).map(({ id, token, at, change }) => ({
      id,
      token,
      at,
      kind: change._tag,
      message_id: change._tag === "Sent" ? change.messageId : null,
      error: change._tag === "Retry" || change._tag === "Failed" ? change.error : null,
      retry_at: change._tag === "Retry" ? change.at : null
    }))
    const rows = yield* sql<{ readonly id: string; readonly token: string }>`
      WITH input AS (
        SELECT * FROM jsonb_to_recordset(${jsonParam(input)}::jsonb)
          AS w(id text, token text, at timestamptz, kind text, message_id text, error text, retry_at timestamptz)
      ), old AS (
        SELECT r.id, r.status AS was, w.token, w.at, w.kind, w.message_id, w.error, w.retry_at
        FROM input w CROSS JOIN LATERAL (
          SELECT id, status FROM campaign_recipients
          WHERE id = w.id AND lease_token = w.token AND CASE w.kind
            WHEN 'Begin' THEN status = 'pending' AND lease_expires_at > w.at
            WHEN 'Sent' THEN true
            ELSE status = 'pending' END
          FOR UPDATE
        ) r
      ), changed AS (
        UPDATE campaign_recipients r SET
          status = CASE o.kind WHEN 'Begin' THEN r.status WHEN 'Sent' THEN 'sent' WHEN 'Failed' THEN 'failed'
            ELSE CASE WHEN r.attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'pending' END END,
          send_started_at = CASE WHEN o.kind = 'Begin' THEN o.at END,
          sent_at = CASE WHEN o.kind = 'Sent' THEN o.at ELSE r.sent_at END,
          message_id = CASE WHEN o.kind = 'Sent' THEN o.message_id ELSE r.message_id END,
          error_message = CASE o.kind WHEN 'Begin' THEN r.error_message WHEN 'Sent' THEN NULL ELSE o.error END,
          attempts = CASE WHEN o.kind = 'Retry' THEN r.attempts + 1 ELSE r.attempts END,
          next_attempt_at = CASE WHEN o.kind = 'Retry' THEN o.retry_at ELSE r.next_attempt_at END,
          lease_token = CASE WHEN o.kind = 'Begin' THEN r.lease_token END,
          lease_expires_at = CASE WHEN o.kind = 'Begin' THEN r.lease_expires_at END,
          updated_at = CASE WHEN o.kind = 'Begin' THEN r.updated_at ELSE o.at END
        -- The LIMIT (the group's size) only keeps the planner from estimating the group at 100 rows, which on
        -- a small campaign made a scan of every recipient look cheaper than a lookup per write.
        FROM (SELECT * FROM old LIMIT ${writes.length}) o WHERE r.id = o.id
        RETURNING r.id, r.campaign_id, r.status, o.was, o.token
      ), ${countsKept}
      SELECT id, token FROM changed`
    const applied = new Set(rows.map((row) => `${row.id} ${row.token}`))
    return writes.map((write) => applied.has(`${write.id} ${write.token}`))
  }, Effect.orDie)
  return {
    claim: Effect.fn("RecipientsRepo.claim")(function*(now, expiresAt, limit) {
      const token = newId("lease")
      const rows = yield* leasedClaim(sql, {
        table: "campaign_recipients",
        where: sql`status = 'pending' AND campaign_id IN (SELECT id FROM campaigns WHERE status = 'sending')
          AND (next_attempt_at IS NULL OR next_attempt_at <= ${now}) AND ${leaseFree(now)}`,
        orderBy: sql`campaign_id, id`,
        limit,
        lease: { token, until: expiresAt },
        update: { where: sql`status = 'pending' AND ${leaseFree(now)}` },
        returning: sql`campaign_recipients.*`
      })
      return { token, recipients: (yield* decodeRecipients(rows)).toSorted((a, b) => a.id.localeCompare(b.id)) }
    }, Effect.orDie),
    begin: (id, token, now) => Effect.map(write([{ id, token, at: now, change: { _tag: "Begin" } }], 1), ([applied]) => applied!),
    write,
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
        ), ${countsKept}
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
    record: (id, token, outcome, maxAttempts, now) =>
      Effect.map(write([{ id, token, at: now, change: outcome }], maxAttempts), ([applied]) => applied!),
    completeFinished: Effect.fn("RecipientsRepo.completeFinished")(function*(now) {
      // Sent, unless every recipient it tried failed: then failed, with the most common reason.
      // A sent campaign's `campaign.sent` event commits with its status.
      // The counts are the campaign's kept counts; the reason is looked for only in a campaign that failed whole.
      const rows = yield* readerOf(FinishedCampaign).all(sql`
        WITH finished AS (
          SELECT c.id, coalesce(k.sent, 0) AS sent, coalesce(k.failed, 0) AS failed
          FROM campaigns c LEFT JOIN campaign_recipient_counts k ON k.campaign_id = c.id
          WHERE c.status = 'sending' AND NOT EXISTS (
            SELECT 1 FROM campaign_recipients p WHERE p.campaign_id = c.id AND p.status = 'pending'
          )
        )
        UPDATE campaigns SET
          status = CASE WHEN f.sent = 0 AND f.failed > 0 THEN 'failed' ELSE 'sent' END,
          error_message = CASE WHEN f.sent = 0 AND f.failed > 0
            THEN 'Every recipient failed (' || f.failed || '); the most common reason: ' || coalesce((
              SELECT mode() WITHIN GROUP (ORDER BY r.error_message) FROM campaign_recipients r
              WHERE r.campaign_id = f.id AND r.status = 'failed'
            ), 'unknown')
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
    }, sql.withTransaction, Effect.orDie)
  }
}
