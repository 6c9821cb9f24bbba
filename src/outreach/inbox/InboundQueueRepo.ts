import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { LeaseLost } from "../../platform/LeasedWork.ts"
import { newId } from "../../platform/Ids.ts"
import { fromColumns, NumberColumn, readerOf } from "../../storage/Columns.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { jsonParam } from "../../storage/Rows.ts"

/** Where a message arrived, which decides the companies it may belong to. */
export const Destination = Schema.Struct({
  /** The companies it may be for, each with the mailbox it came through; undefined: any company whose message it answers (the shared `MAIL_FROM`). */
  companies: Schema.optional(Schema.Array(Schema.Struct({ companyId: Schema.String, mailboxId: Schema.NullOr(Schema.String) }))),
  /** The thread a reply address the platform issued names (its company is the only one in `companies`). */
  threadId: Schema.optional(Schema.String),
  /** The outreach message (campaign recipient, sequence execution) a reply address the platform issued names (its company is the only one in `companies`). */
  answers: Schema.optional(Schema.String)
})
export type Destination = typeof Destination.Type

/** A message accepted by inbound SMTP and not yet processed. */
export interface QueuedMessage {
  readonly id: string
  readonly raw: Buffer
  readonly destinations: ReadonlyArray<Destination>
  /** How often it was claimed, this claim included. */
  readonly attempts: number
}

/** Messages claimed together under one lease. */
export interface QueueClaim {
  readonly token: string
  readonly messages: ReadonlyArray<QueuedMessage>
}

const QueuedRow = fromColumns(Schema.Struct({
  id: Schema.String,
  /** base64: bytea travels as text on both drivers. */
  raw: Schema.String,
  destinations: Schema.Array(Destination),
  attempts: NumberColumn
}))

export class InboundQueueRepo extends Context.Service<InboundQueueRepo, {
  /** Stores accepted messages, in one statement. */
  readonly enqueue: (messages: ReadonlyArray<{ readonly raw: Buffer; readonly destinations: ReadonlyArray<Destination> }>, now: Date) => Effect.Effect<void>
  /** Claims up to `limit` messages nobody holds (oldest first) until `leaseUntil`; quarantined ones are never claimed. */
  readonly claim: (now: Date, leaseUntil: Date, limit: number) => Effect.Effect<QueueClaim>
  /** Extends the claim's lease; false when it was taken over. */
  readonly renew: (token: string, leaseUntil: Date) => Effect.Effect<boolean>
  /**
   * Settles claimed messages: `done` ones are removed, `quarantined` ones kept with why, never claimed again.
   * Fails with `LeaseLost` (run it in the transaction storing what they became, which then rolls back) when the
   * claim no longer holds every one of them.
   */
  readonly settle: (token: string, done: ReadonlyArray<string>, quarantined: ReadonlyArray<readonly [id: string, reason: string]>) => Effect.Effect<void, LeaseLost>
}>()("inbox/InboundQueueRepo") {
  static readonly layer = Layer.effect(InboundQueueRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queued = readerOf(QueuedRow)
    const encodeDestinations = Schema.encodeSync(Schema.Array(Destination))
    return {
      enqueue: (messages, now) =>
        sql`INSERT INTO inbound_queue (id, raw, destinations, received_at)
          SELECT q.id, decode(q.raw, 'base64'), q.destinations, ${now}
          FROM jsonb_to_recordset(${jsonParam(messages.map((message) => ({
            id: newId("inq"),
            raw: message.raw.toString("base64"),
            destinations: encodeDestinations(message.destinations)
          })))}::jsonb) AS q(id text, raw text, destinations jsonb)`.pipe(Effect.asVoid, Effect.orDie),
      claim: (now, leaseUntil, limit) =>
        Effect.gen(function*() {
          const token = crypto.randomUUID()
          const rows = yield* queued.all(leasedClaim(sql, {
            table: "inbound_queue",
            where: sql`quarantined_reason IS NULL AND (lease_expires_at IS NULL OR lease_expires_at < ${now})`,
            orderBy: sql`id`,
            limit,
            lease: { token, until: leaseUntil },
            update: { set: sql`attempts = attempts + 1` },
            returning: sql`id, encode(raw, 'base64') AS raw, destinations, attempts`
          }))
          const messages = rows.map((row) => ({ ...row, raw: Buffer.from(row.raw, "base64") })).sort((a, b) => a.id.localeCompare(b.id))
          return { token, messages }
        }).pipe(Effect.orDie),
      renew: (token, leaseUntil) =>
        Effect.map(
          sql`UPDATE inbound_queue SET lease_expires_at = ${leaseUntil} WHERE lease_token = ${token} RETURNING id`,
          (rows) => rows.length > 0
        ).pipe(Effect.orDie),
      settle: (token, done, quarantined) =>
        Effect.gen(function*() {
          const ids = [...done, ...quarantined.map(([id]) => id)]
          if (ids.length === 0) return
          const settled = yield* sql<{ readonly id: string }>`WITH reasons AS (
              SELECT q.id, q.reason FROM jsonb_to_recordset(${jsonParam(quarantined.map(([id, reason]) => ({ id, reason })))}::jsonb) AS q(id text, reason text)
            ), quarantined AS (
              UPDATE inbound_queue SET quarantined_reason = reasons.reason, lease_token = NULL, lease_expires_at = NULL
              FROM reasons WHERE inbound_queue.id = reasons.id AND inbound_queue.lease_token = ${token} RETURNING inbound_queue.id
            ), removed AS (
              DELETE FROM inbound_queue WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(done)}::jsonb))) AND lease_token = ${token} RETURNING id
            )
            SELECT id FROM quarantined UNION ALL SELECT id FROM removed`.pipe(Effect.orDie)
          if (settled.length < ids.length) return yield* new LeaseLost({ id: token })
        })
    }
  }))
}
