import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam, toNumber } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import { Classification, ThreadStatus } from "./Api.ts"

export const ThreadRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  mailboxId: Schema.NullOr(Schema.String),
  subject: Schema.String,
  /** The subject without `Re:`/`Fwd:` prefixes, lower-cased: what a reply without threading headers is matched on. */
  subjectKey: Schema.String,
  contactEmail: Schema.String,
  contactKey: Schema.String,
  status: ThreadStatus,
  classification: Schema.NullOr(Classification),
  unread: Schema.Boolean,
  leadId: Schema.NullOr(Schema.String),
  campaignId: Schema.NullOr(Schema.String),
  campaignRecipientId: Schema.NullOr(Schema.String),
  sequenceId: Schema.NullOr(Schema.String),
  sequenceExecutionId: Schema.NullOr(Schema.String),
  messageCount: NumberColumn,
  lastMessageAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type ThreadRecord = typeof ThreadRecord.Type

export const MessageRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  threadId: Schema.String,
  direction: Schema.Literals(["inbound", "outbound"]),
  messageId: Schema.String,
  fromAddress: Schema.String,
  toAddresses: Schema.Array(Schema.String),
  subject: Schema.String,
  textBody: Schema.String,
  htmlBody: Schema.NullOr(Schema.String),
  receivedAt: Timestamp,
  /** Sent by a machine (auto-reply, bounce, list mail): never answered automatically. */
  automatic: Schema.Boolean,
  classification: Schema.NullOr(Classification)
})
export type MessageRecord = typeof MessageRecord.Type

export interface ThreadFilter {
  readonly status?: typeof ThreadStatus.Type | undefined
  readonly classification?: Classification | undefined
  readonly leadId?: string | undefined
  readonly mailboxId?: string | undefined
  readonly unread?: boolean | undefined
}

export interface ThreadLookup {
  readonly threadId?: string | undefined
  readonly messageIds: ReadonlyArray<string>
  readonly contactKey: string
  readonly subjectKey: string
  /** The new message's Message-ID. */
  readonly messageId: string
}

const ThreadRow = fromColumns(ThreadRecord)
const decodeThread = Schema.decodeUnknownEffect(ThreadRow)
const MessageRow = fromColumns(MessageRecord)

export class ThreadsRepo extends Context.Service<ThreadsRepo, {
  /** The thread, among `companies`' (any company when undefined), holding a message with one of these Message-IDs. */
  readonly byMessageIds: (companies: ReadonlyArray<string> | undefined, messageIds: ReadonlyArray<string>) => Effect.Effect<Option.Option<ThreadRecord>>
  /**
   * Where a new message of the company goes, in one statement: the thread `threadId` names, else the latest one
   * holding a message of `messageIds`, else the latest one with this contact on this subject; and whether the
   * company holds a message of `messageId` already.
   */
  readonly locate: (companyId: string, lookup: ThreadLookup) => Effect.Effect<{ readonly thread: Option.Option<ThreadRecord>; readonly duplicate: boolean }>
  /**
   * Adds a message to its thread, in one statement: the thread (`created`, made with it, when given) is brought up
   * to date (count, latest time, unread and class for an inbound one). Answers the thread; none when the company
   * holds a message of that Message-ID already (nothing changes).
   */
  readonly addMessage: (message: MessageRecord, created?: ThreadRecord) => Effect.Effect<Option.Option<ThreadRecord>>
  /** These threads, where they name no lead, name their contact's lead (if any); answers the lead each one now names. */
  readonly linkLeads: (threadIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  readonly list: (companyId: string, filter: ThreadFilter, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<ThreadRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<ThreadRecord>>
  /** Oldest first. */
  readonly messages: (threadId: string) => Effect.Effect<ReadonlyArray<MessageRecord>>
  readonly update: (companyId: string, id: string, change: { readonly status?: "open" | "archived" | undefined; readonly unread?: boolean | undefined }, now: Date) => Effect.Effect<Option.Option<ThreadRecord>>
}>()("inbox/ThreadsRepo") {
  static readonly layer = Layer.effect(ThreadsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const threads = readerOf(ThreadRow)
    const messages = readerOf(MessageRow)
    return {
      byMessageIds: (companies, messageIds) =>
        messageIds.length === 0 || companies?.length === 0
          ? Effect.succeedNone
          : threads.first(sql`
            SELECT t.* FROM inbox_messages m JOIN inbox_threads t ON t.id = m.thread_id
            WHERE m.message_id IN ${sql.in(messageIds)}
              ${companies === undefined ? sql`` : sql`AND m.company_id IN ${sql.in(companies)}`}
            ORDER BY m.received_at DESC LIMIT 1`).pipe(Effect.orDie),
      locate: (companyId, lookup) =>
        Effect.gen(function*() {
          const candidates = [
            ...(lookup.threadId === undefined ? [] : [sql`(SELECT t.*, 0 AS rank FROM inbox_threads t WHERE t.company_id = ${companyId} AND t.id = ${lookup.threadId})`]),
            ...(lookup.messageIds.length === 0 ? [] : [sql`(SELECT t.*, 1 AS rank FROM inbox_messages m JOIN inbox_threads t ON t.id = m.thread_id
              WHERE m.company_id = ${companyId} AND m.message_id IN ${sql.in(lookup.messageIds)} ORDER BY m.received_at DESC LIMIT 1)`]),
            sql`(SELECT t.*, 2 AS rank FROM inbox_threads t
              WHERE t.company_id = ${companyId} AND t.contact_key = ${lookup.contactKey} AND t.subject_key = ${lookup.subjectKey}
              ORDER BY t.last_message_at DESC LIMIT 1)`
          ]
          const rows = yield* sql<{ readonly duplicate: boolean; readonly id: string | null }>`
            SELECT EXISTS (SELECT 1 FROM inbox_messages WHERE company_id = ${companyId} AND message_id = ${lookup.messageId}) AS duplicate, found.*
            FROM (SELECT 1) AS one LEFT JOIN LATERAL (
              SELECT * FROM (${sql.join(" UNION ALL ", false)(candidates)}) AS candidates ORDER BY rank LIMIT 1
            ) AS found ON true`
          const row = rows[0]!
          return { thread: row.id === null ? Option.none() : Option.some(yield* decodeThread(row)), duplicate: row.duplicate }
        }).pipe(Effect.orDie),
      addMessage: (message, created) => {
        const inbound = message.direction === "inbound"
        const added = sql`added AS (
            INSERT INTO inbox_messages (id, company_id, thread_id, direction, message_id, from_address, to_addresses, subject,
              text_body, html_body, received_at, automatic, classification)
            VALUES (${message.id}, ${message.companyId}, ${message.threadId}, ${message.direction}, ${message.messageId},
              ${message.fromAddress}, ${jsonParam(message.toAddresses)}::jsonb, ${message.subject}, ${message.textBody},
              ${message.htmlBody}, ${message.receivedAt}, ${message.automatic}, ${message.classification})
            ON CONFLICT (company_id, message_id) DO NOTHING RETURNING thread_id)`
        if (created !== undefined) {
          // The thread and its first message in one statement: the message's reference to it is checked at the statement's end.
          const row = Schema.encodeSync(ThreadRow)({
            ...created,
            messageCount: 1,
            lastMessageAt: message.receivedAt,
            unread: inbound,
            classification: message.classification ?? created.classification,
            status: "open"
          }) as Record<string, unknown>
          const columns = Object.keys(row)
          const list = sql.join(", ", false)
          return threads.first(sql`WITH ${added}
            INSERT INTO inbox_threads (${list(columns.map((column) => sql`${sql(column)}`))})
            SELECT ${list(columns.map((column) => sql`${row[column]}`))} WHERE EXISTS (SELECT 1 FROM added) RETURNING *`).pipe(Effect.orDie)
        }
        return threads.first(sql`WITH ${added}
          UPDATE inbox_threads SET message_count = message_count + 1,
              last_message_at = greatest(last_message_at, ${message.receivedAt}),
              unread = ${inbound ? sql`true` : sql`unread`},
              classification = ${message.classification === null ? sql`classification` : sql`${message.classification}`},
              status = ${inbound ? sql`'open'` : sql`status`},
              updated_at = greatest(${message.receivedAt}::timestamptz, updated_at + interval '1 millisecond')
            FROM added WHERE inbox_threads.id = added.thread_id RETURNING inbox_threads.*`).pipe(Effect.orDie)
      },
      linkLeads: (threadIds) =>
        threadIds.length === 0 ? Effect.succeed(new Map()) : sql<{ readonly id: string; readonly lead_id: string }>`
          UPDATE inbox_threads t SET lead_id = l.id FROM leads l
          WHERE t.id IN ${sql.in(threadIds)} AND t.lead_id IS NULL AND l.company_id = t.company_id AND lower(l.email) = t.contact_key
          RETURNING t.id, t.lead_id`.pipe(Effect.map((rows) => new Map(rows.map((row) => [row.id, row.lead_id]))), Effect.orDie),
      list: (companyId, filter, window) => {
        const where = sql.and([
          sql`company_id = ${companyId}`,
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.classification === undefined ? [] : [sql`classification = ${filter.classification}`]),
          ...(filter.leadId === undefined ? [] : [sql`lead_id = ${filter.leadId}`]),
          ...(filter.mailboxId === undefined ? [] : [sql`mailbox_id = ${filter.mailboxId}`]),
          ...(filter.unread === undefined ? [] : [sql`unread = ${filter.unread}`])
        ])
        return Effect.all([
          threads.all(sql`SELECT * FROM inbox_threads WHERE ${where} ORDER BY last_message_at DESC, id DESC
            LIMIT ${window.limit} OFFSET ${window.offset}`),
          sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM inbox_threads WHERE ${where}`
        ]).pipe(Effect.map(([rows, count]) => ({ rows, total: toNumber(count[0].count) })), Effect.orDie)
      },
      get: (companyId, id) =>
        threads.first(sql`SELECT * FROM inbox_threads WHERE company_id = ${companyId} AND id = ${id}`).pipe(Effect.orDie),
      messages: (threadId) =>
        messages.all(sql`SELECT * FROM inbox_messages WHERE thread_id = ${threadId} ORDER BY received_at, id`).pipe(Effect.orDie),
      update: (companyId, id, change, now) =>
        threads.first(sql`UPDATE inbox_threads SET
            status = coalesce(${change.status ?? null}, status),
            unread = coalesce(${change.unread ?? null}, unread),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id} RETURNING *`).pipe(Effect.orDie)
    }
  }))
}
