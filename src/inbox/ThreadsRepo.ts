import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../storage/Columns.ts"
import { jsonParam, toNumber } from "../storage/Rows.ts"
import type { Window } from "../storage/Windows.ts"
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

const ThreadRow = fromColumns(ThreadRecord)
const MessageRow = fromColumns(MessageRecord)

export class ThreadsRepo extends Context.Service<ThreadsRepo, {
  /** The thread, among `companies`' (any company when undefined), holding a message with one of these Message-IDs. */
  readonly byMessageIds: (companies: ReadonlyArray<string> | undefined, messageIds: ReadonlyArray<string>) => Effect.Effect<Option.Option<ThreadRecord>>
  /** The company's latest thread with this contact on this subject. */
  readonly byContact: (companyId: string, contactKey: string, subjectKey: string) => Effect.Effect<Option.Option<ThreadRecord>>
  readonly create: (thread: ThreadRecord) => Effect.Effect<ThreadRecord>
  /** Whether the company holds a message of this Message-ID already. */
  readonly hasMessage: (companyId: string, messageId: string) => Effect.Effect<boolean>
  /**
   * Adds a message to its thread and brings the thread up to date (count,
   * latest time, unread and class for an inbound one); false when the company
   * holds a message of that Message-ID already (nothing changes).
   */
  readonly addMessage: (message: MessageRecord) => Effect.Effect<boolean>
  readonly list: (companyId: string, filter: ThreadFilter, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<ThreadRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<ThreadRecord>>
  /** Oldest first. */
  readonly messages: (threadId: string) => Effect.Effect<ReadonlyArray<MessageRecord>>
  readonly update: (companyId: string, id: string, change: { readonly status?: "open" | "archived" | undefined; readonly unread?: boolean | undefined }, now: Date) => Effect.Effect<Option.Option<ThreadRecord>>
  readonly setLead: (threadId: string, leadId: string) => Effect.Effect<void>
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
      byContact: (companyId, contactKey, subjectKey) =>
        threads.first(sql`SELECT * FROM inbox_threads
          WHERE company_id = ${companyId} AND contact_key = ${contactKey} AND subject_key = ${subjectKey}
          ORDER BY last_message_at DESC LIMIT 1`).pipe(Effect.orDie),
      create: (thread) =>
        threads.one(sql`INSERT INTO inbox_threads ${sql.insert(Schema.encodeSync(ThreadRow)(thread) as Record<string, unknown>)} RETURNING *`)
          .pipe(Effect.orDie),
      hasMessage: (companyId, messageId) =>
        Effect.map(sql`SELECT 1 FROM inbox_messages WHERE company_id = ${companyId} AND message_id = ${messageId}`, (rows) => rows.length > 0)
          .pipe(Effect.orDie),
      addMessage: (message) =>
        sql.withTransaction(Effect.gen(function*() {
          const inserted = yield* sql`
            INSERT INTO inbox_messages (id, company_id, thread_id, direction, message_id, from_address, to_addresses, subject,
              text_body, html_body, received_at, automatic, classification)
            VALUES (${message.id}, ${message.companyId}, ${message.threadId}, ${message.direction}, ${message.messageId},
              ${message.fromAddress}, ${jsonParam(message.toAddresses)}::jsonb, ${message.subject}, ${message.textBody},
              ${message.htmlBody}, ${message.receivedAt}, ${message.automatic}, ${message.classification})
            ON CONFLICT (company_id, message_id) DO NOTHING RETURNING id`
          if (inserted.length === 0) return false
          const inbound = message.direction === "inbound"
          yield* sql`UPDATE inbox_threads SET message_count = message_count + 1,
              last_message_at = greatest(last_message_at, ${message.receivedAt}),
              unread = ${inbound ? sql`true` : sql`unread`},
              classification = ${message.classification === null ? sql`classification` : sql`${message.classification}`},
              status = ${inbound ? sql`'open'` : sql`status`},
              updated_at = greatest(${message.receivedAt}::timestamptz, updated_at + interval '1 millisecond')
            WHERE id = ${message.threadId}`
          return true
        })).pipe(Effect.orDie),
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
          WHERE company_id = ${companyId} AND id = ${id} RETURNING *`).pipe(Effect.orDie),
      setLead: (threadId, leadId) =>
        sql`UPDATE inbox_threads SET lead_id = ${leadId} WHERE id = ${threadId}`.pipe(Effect.asVoid, Effect.orDie)
    }
  }))
}
