import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import { jsonParam } from "./Rows.ts"

/**
 * The event outbox (DESIGN §7.11): any area records what happened with
 * `emit`, on the ambient `SqlClient`. Run inside the caller's
 * `sql.withTransaction`, the event commits or rolls back with the change that
 * caused it, so no event is ever sent for a change that rolled back, and none
 * is lost for one that committed. The webhooks area's worker fans the outbox
 * out to the company's webhooks; no area needs to import it.
 */

const eventTypes = [
  "campaign.sent",
  "recipient.opened",
  "recipient.clicked",
  "recipient.bounced",
  "inbox.reply_received",
  "lead.created",
  "lead.status_changed",
  "landing_page.submitted",
  "task.run_completed",
  "document.ready",
  "render.completed"
] as const

/** Every event a webhook can subscribe to. */
export const EventType = Schema.Literals(eventTypes).annotate({
  identifier: "EventType",
  message: `Expected an event type, one of ${eventTypes.map((type) => `"${type}"`).join(", ")}`
})
export type EventType = typeof EventType.Type

/** What an event says: a JSON object, documented per type in docs/webhooks.md. */
export type EventPayload = Readonly<Record<string, unknown>>

export interface OutboxEvent {
  readonly companyId: string
  readonly type: EventType
  readonly payload: EventPayload
}

/**
 * Records events in the outbox with one statement, whatever their number
 * (a batch of opens, every bounce of a send). Within a transaction they are
 * part of it.
 */
export const emitAll = (events: ReadonlyArray<OutboxEvent>): Effect.Effect<void, never, SqlClient.SqlClient> =>
  events.length === 0 ? Effect.void : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = yield* currentDate
    const rows = jsonParam(events.map((event) => ({
      id: newId("evt"),
      company_id: event.companyId,
      type: event.type,
      payload: event.payload
    })))
    yield* sql`INSERT INTO event_outbox (id, company_id, type, payload, created_at)
      SELECT t.id, t.company_id, t.type, t.payload, ${now} FROM jsonb_to_recordset(${rows}::jsonb)
        AS t(id text, company_id text, type text, payload jsonb)`
  }).pipe(Effect.orDie)

/** Records one event of `companyId` in the outbox (see `emitAll`). */
export const emit = (companyId: string, type: EventType, payload: EventPayload) =>
  emitAll([{ companyId, type, payload }])

/**
 * `emit` and `emitAll` on a given client, for repositories, which hold their
 * `SqlClient` instead of requiring it; inside the client's transaction they
 * are part of it.
 */
export const outboxOn = (sql: SqlClient.SqlClient) => ({
  emit: (companyId: string, type: EventType, payload: EventPayload) =>
    Effect.provideService(emit(companyId, type, payload), SqlClient.SqlClient, sql),
  emitAll: (events: ReadonlyArray<OutboxEvent>) => Effect.provideService(emitAll(events), SqlClient.SqlClient, sql)
})
