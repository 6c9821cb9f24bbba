import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { NumberColumn } from "../../storage/Columns.ts"
import { leasedClaim, lockedPick } from "../../storage/LeasedClaim.ts"
import { type DeliveryRecord, DeliveryRow } from "./WebhooksRepo.ts"

/** A delivery a worker claimed: its webhook's address and secret, and the lease's token. */
export interface DeliveryClaim {
  readonly delivery: DeliveryRecord
  readonly url: string
  readonly secret: string
  readonly token: string
}

/** What the receiver answered an attempt, when it answered. */
export interface Answer {
  readonly responseStatus: number | null
  readonly responseExcerpt: string | null
  readonly latencyMs: number | null
  readonly error: string | null
}

/** How an attempt ends: delivered; to be tried again at `at`; or failed for good, turning its webhook off when `disable` says why. */
export type AttemptOutcome =
  | { readonly _tag: "Delivered"; readonly answer: Answer }
  | { readonly _tag: "Retry"; readonly answer: Answer; readonly at: Date }
  | { readonly _tag: "Failed"; readonly answer: Answer; readonly disable: string }

/** What a claim reads of the delivery's webhook, beside the delivery's own columns. */
const Endpoint = Schema.Struct({ webhook_url: Schema.String, webhook_secret: Schema.String })
const FannedOut = Schema.Struct({ events: NumberColumn, deliveries: NumberColumn })

/**
 * The delivery worker's side of the deliveries: fanning the event outbox out,
 * and leasing deliveries so that exactly one attempt of each is in flight
 * across every process on one database. Every write after the claim checks the
 * lease: an attempt whose lease was taken over records nothing.
 */
export class DeliveriesRepo extends Context.Service<DeliveriesRepo, {
  /**
   * Takes up to `limit` events from the outbox, oldest first, and makes one
   * pending delivery per enabled webhook of the event's company subscribed to
   * its type, in one statement: an event is fanned out once, by one process.
   */
  readonly fanOut: (now: Date, limit: number) => Effect.Effect<{ readonly events: number; readonly deliveries: number }>
  /** Leases up to `limit` due deliveries of enabled webhooks (test deliveries whatever the webhook), counting an attempt each. */
  readonly claim: (now: Date, leaseUntil: Date, limit: number) => Effect.Effect<ReadonlyArray<DeliveryClaim>>
  readonly renew: (claim: DeliveryClaim, leaseUntil: Date) => Effect.Effect<boolean>
  /** Records an attempt's outcome while the lease is held; false (nothing recorded) when it was lost. */
  readonly finish: (claim: DeliveryClaim, outcome: AttemptOutcome, now: Date) => Effect.Effect<boolean>
}>()("webhooks/DeliveriesRepo") {
  static readonly layer = Layer.effect(DeliveriesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const decodeDeliveries = Schema.decodeUnknownEffect(Schema.Array(DeliveryRow))
    const decodeEndpoints = Schema.decodeUnknownEffect(Schema.Array(Endpoint))
    const decodeFannedOut = Schema.decodeUnknownEffect(FannedOut)
    const held = (claim: DeliveryClaim) => sql`id = ${claim.delivery.id} AND lease_token = ${claim.token}`

    return {
      fanOut: (now, limit) =>
        Effect.gen(function*() {
          // The delivery id joins the event's and the webhook's (one delivery per pair), time-sortable by event.
          const rows = yield* sql`
            WITH ${lockedPick(sql, { table: "event_outbox", orderBy: sql`id`, limit })}, taken AS (
              DELETE FROM event_outbox USING picked WHERE event_outbox.id = picked.picked_id RETURNING event_outbox.*
            ), made AS (
              INSERT INTO webhook_deliveries (id, webhook_id, company_id, event_id, event_type, payload, event_at, test,
                status, attempts, next_attempt_at, created_at, updated_at)
              SELECT 'whd_' || substr(t.id, 5) || substr(w.id, 5), w.id, t.company_id, t.id, t.type, t.payload, t.created_at,
                false, 'pending', 0, ${now}, ${now}, ${now}
              FROM taken t JOIN webhooks w ON w.company_id = t.company_id AND w.enabled
                AND w.events @> jsonb_build_array(t.type)
              RETURNING 1
            )
            SELECT (SELECT count(*) FROM taken) AS events, (SELECT count(*) FROM made) AS deliveries`
          return yield* decodeFannedOut(rows[0])
        }).pipe(Effect.orDie),

      claim: (now, leaseUntil, limit) =>
        Effect.gen(function*() {
          const token = crypto.randomUUID()
          const rows = yield* leasedClaim(sql, {
            table: "webhook_deliveries",
            join: sql`JOIN webhooks ON webhooks.id = webhook_deliveries.webhook_id`,
            where: sql`webhook_deliveries.status = 'pending' AND webhook_deliveries.next_attempt_at <= ${now}
              AND (webhook_deliveries.lease_until IS NULL OR webhook_deliveries.lease_until < ${now})
              AND (webhooks.enabled OR webhook_deliveries.test)`,
            orderBy: sql`webhook_deliveries.next_attempt_at`,
            limit,
            lease: { token, until: leaseUntil, untilColumn: "lease_until" },
            update: {
              set: sql`attempts = webhook_deliveries.attempts + 1`,
              from: sql`webhooks`,
              where: sql`webhooks.id = webhook_deliveries.webhook_id`
            },
            returning: sql`webhook_deliveries.*, webhooks.url AS webhook_url, webhooks.secret AS webhook_secret`
          })
          const [deliveries, endpoints] = yield* Effect.all([decodeDeliveries(rows), decodeEndpoints(rows)])
          return deliveries.map((delivery, index): DeliveryClaim => ({
            delivery,
            url: endpoints[index]!.webhook_url,
            secret: endpoints[index]!.webhook_secret,
            token
          }))
        }).pipe(Effect.orDie),

      renew: (claim, leaseUntil) =>
        Effect.map(
          sql`UPDATE webhook_deliveries SET lease_until = ${leaseUntil} WHERE ${held(claim)} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),

      finish: (claim, outcome, now) =>
        Effect.gen(function*() {
          const { answer } = outcome
          const status = outcome._tag === "Delivered" ? "delivered" : outcome._tag === "Retry" ? "pending" : "failed"
          const nextAttemptAt = outcome._tag === "Retry" ? outcome.at : null
          const deliveredAt = outcome._tag === "Delivered" ? now : null
          // The webhook hears of it in the same statement: its last success, or its being turned off.
          const webhookChange = outcome._tag === "Delivered"
            ? sql`, touched AS (UPDATE webhooks SET last_success_at = ${now} WHERE id = ${claim.delivery.webhookId} AND NOT ${claim.delivery.test})`
            : outcome._tag === "Failed" && !claim.delivery.test
            ? sql`, touched AS (
                UPDATE webhooks SET enabled = false, disabled_reason = ${outcome.disable},
                  updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
                WHERE id = ${claim.delivery.webhookId} AND enabled
                  AND (last_success_at IS NULL OR last_success_at < ${claim.delivery.createdAt})
                  AND EXISTS (SELECT 1 FROM finished))`
            : sql``
          const rows = yield* sql`
            WITH finished AS (
              UPDATE webhook_deliveries SET status = ${status}, next_attempt_at = ${nextAttemptAt},
                lease_token = NULL, lease_until = NULL,
                response_status = ${answer.responseStatus}, response_excerpt = ${answer.responseExcerpt},
                latency_ms = ${answer.latencyMs}, error = ${answer.error},
                delivered_at = coalesce(${deliveredAt}::timestamptz, delivered_at),
                updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
              WHERE ${held(claim)}
              RETURNING id
            )${webhookChange}
            SELECT id FROM finished`
          return rows.length > 0
        }).pipe(Effect.orDie)
    }
  }))
}
