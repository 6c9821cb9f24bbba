import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, JsonObject, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const WebhookRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  /** Why the platform turned it off (repeated failure); null when enabled or turned off by a person. */
  disabledReason: Schema.NullOr(Schema.String),
  secret: Schema.String,
  lastSuccessAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type WebhookRecord = typeof WebhookRecord.Type

export const DeliveryStatus = Schema.Literals(["pending", "delivered", "failed"])

export const DeliveryRecord = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  companyId: Schema.String,
  eventId: Schema.String,
  eventType: Schema.String,
  payload: JsonObject,
  eventAt: Timestamp,
  test: Schema.Boolean,
  status: DeliveryStatus,
  /** Attempts begun, one in flight included. */
  attempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Timestamp),
  leaseToken: Schema.NullOr(Schema.String),
  leaseUntil: Schema.NullOr(Timestamp),
  responseStatus: Schema.NullOr(Schema.Number),
  responseExcerpt: Schema.NullOr(Schema.String),
  latencyMs: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  deliveredAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type DeliveryRecord = typeof DeliveryRecord.Type

export interface WebhookChange {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<string> | undefined
  /** null clears it. */
  readonly description?: string | null | undefined
  readonly enabled?: boolean | undefined
}

export const WebhookRow = fromColumns(WebhookRecord)
export const DeliveryRow = fromColumns(DeliveryRecord)

/** The webhooks of a company and their delivery log; every operation is scoped by the company. */
export class WebhooksRepo extends Context.Service<WebhooksRepo, {
  readonly create: (webhook: WebhookRecord) => Effect.Effect<WebhookRecord>
  /** Newest first. */
  readonly list: (companyId: string, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<WebhookRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<WebhookRecord>>
  /** Turning a webhook on again clears why it was turned off. */
  readonly update: (companyId: string, id: string, change: WebhookChange, now: Date) => Effect.Effect<Option.Option<WebhookRecord>>
  /** Deletes the webhook with its deliveries. */
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<WebhookRecord>>
  /** The webhook's deliveries, newest first, optionally of one status. */
  readonly deliveries: (
    companyId: string,
    webhookId: string,
    status: typeof DeliveryStatus.Type | undefined,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<DeliveryRecord>; readonly total: number }>
  /** Queues a delivery made outside the outbox (a test delivery). */
  readonly enqueue: (delivery: DeliveryRecord) => Effect.Effect<DeliveryRecord>
  /** Makes a delivery due now again, whatever its status; its attempts so far stay counted. */
  readonly retry: (companyId: string, webhookId: string, deliveryId: string, now: Date) => Effect.Effect<Option.Option<DeliveryRecord>>
}>()("webhooks/WebhooksRepo") {
  static readonly layer = Layer.effect(WebhooksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const webhooks = readerOf(WebhookRow)
    const deliveries = readerOf(DeliveryRow)
    return {
      create: (w) =>
        webhooks.one(sql`INSERT INTO webhooks (id, company_id, url, events, description, enabled, disabled_reason, secret,
            last_success_at, created_at, updated_at)
          VALUES (${w.id}, ${w.companyId}, ${w.url}, ${jsonParam(w.events)}::jsonb, ${w.description}, ${w.enabled},
            ${w.disabledReason}, ${w.secret}, ${w.lastSuccessAt}, ${w.createdAt}, ${w.updatedAt})
          RETURNING *`).pipe(Effect.orDie),
      list: (companyId, window) =>
        selectRecords(WebhookRow, sql, "webhooks", sql`company_id = ${companyId}`, window).pipe(Effect.orDie),
      get: (companyId, id) =>
        webhooks.first(sql`SELECT * FROM webhooks WHERE company_id = ${companyId} AND id = ${id}`).pipe(Effect.orDie),
      update: (companyId, id, change, now) =>
        webhooks.first(sql`UPDATE webhooks SET
            url = coalesce(${change.url ?? null}, url),
            events = coalesce(${change.events === undefined ? null : jsonParam(change.events)}::jsonb, events),
            description = ${change.description === undefined ? sql`description` : sql`${change.description}`},
            enabled = coalesce(${change.enabled ?? null}, enabled),
            disabled_reason = ${change.enabled === true ? null : sql`disabled_reason`},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`).pipe(Effect.orDie),
      remove: (companyId, id) =>
        webhooks.first(sql`DELETE FROM webhooks WHERE company_id = ${companyId} AND id = ${id} RETURNING *`).pipe(Effect.orDie),
      deliveries: (companyId, webhookId, status, window) =>
        selectRecords(
          DeliveryRow,
          sql,
          "webhook_deliveries",
          sql.and([
            sql`company_id = ${companyId}`,
            sql`webhook_id = ${webhookId}`,
            ...(status === undefined ? [] : [sql`status = ${status}`])
          ]),
          window
        ).pipe(Effect.orDie),
      enqueue: (d) =>
        deliveries.one(sql`INSERT INTO webhook_deliveries (id, webhook_id, company_id, event_id, event_type, payload, event_at,
            test, status, attempts, next_attempt_at, created_at, updated_at)
          VALUES (${d.id}, ${d.webhookId}, ${d.companyId}, ${d.eventId}, ${d.eventType}, ${jsonParam(d.payload)}::jsonb,
            ${d.eventAt}, ${d.test}, ${d.status}, ${d.attempts}, ${d.nextAttemptAt}, ${d.createdAt}, ${d.updatedAt})
          RETURNING *`).pipe(Effect.orDie),
      retry: (companyId, webhookId, deliveryId, now) =>
        deliveries.first(sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND webhook_id = ${webhookId} AND id = ${deliveryId}
          RETURNING *`).pipe(Effect.orDie)
    }
  }))
}
