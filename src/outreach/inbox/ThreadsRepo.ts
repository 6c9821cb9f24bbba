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

/** Where a new message goes (`ThreadsRepo.locate`). */
export interface ThreadLocation {
  readonly thread: Option.Option<ThreadRecord>
  /** Found by the thread's id or a Message-ID the message names (else by contact and subject, or not at all). */
  readonly named: boolean
  /** The company holds a message of this Message-ID already. */
  readonly duplicate: boolean
}

const ThreadRow = fromColumns(ThreadRecord)
const decodeThread = Schema.decodeUnknownEffect(ThreadRow)
const MessageRow = fromColumns(MessageRecord)

export class ThreadsRepo extends Context.Service<ThreadsRepo, {
  /** The thread, among `companies`' (any company when undefined), holding a message with one of these Message-IDs. */
  readonly byMessageIds: (companies: ReadonlyArray<string> | undefined, messageIds: ReadonlyArray<string>) => Effect.Effect<Option.Option<ThreadRecord>>
  /**
   * Where each new message of a company goes, in one statement for all: the thread `threadId` names, else the latest
   * one holding a message of `messageIds`, else the latest one with this contact on this subject; and whether the
   * company holds a message of `messageId` already. Answers in the order asked (`named`: the thread was found by
   * `threadId` or `messageIds`, not by contact and subject).
   */
  readonly locate: (lookups: ReadonlyArray<{ readonly companyId: string; readonly lookup: ThreadLookup }>) => Effect.Effect<ReadonlyArray<ThreadLocation>>
  /**
   * Adds messages to their threads, in one statement: each thread (`created`, made with its first message, when
   * given) is brought up to date (count, latest time, unread and class for inbound ones). A message whose
   * Message-ID the company holds already changes nothing. Answers the thread of each message stored, by its id.
   */
  readonly addMessages: (entries: ReadonlyArray<{ readonly message: MessageRecord; readonly created?: ThreadRecord | undefined }>) => Effect.Effect<ReadonlyMap<string, ThreadRecord>>
  /** These threads, where they name no lead, name their contact's lead (if any); answers the lead each one now names. */
  readonly linkLeads: (threadIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  readonly list: (companyId: string, filter: ThreadFilter, window: Window) => Effect.Effect<{ readonly rows: ReadonlyArray<ThreadRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<ThreadRecord>>
  /** The thread `id` whatever its company: a reply address names one, and is then checked against its company. */
  readonly named: (id: string) => Effect.Effect<Option.Option<ThreadRecord>>
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
      locate: (lookups) =>
        Effect.gen(function*() {
          if (lookups.length === 0) return []
          const rows = yield* sql<{ readonly idx: number; readonly duplicate: boolean; readonly id: string | null; readonly rank: number | null }>`
            SELECT l.idx, EXISTS (SELECT 1 FROM inbox_messages WHERE company_id = l.company_id AND message_id = l.message_id) AS duplicate, found.*
            FROM jsonb_to_recordset(${jsonParam(lookups.map(({ companyId, lookup }, idx) => ({
              idx,
              company_id: companyId,
              thread_id: lookup.threadId ?? null,
              message_ids: lookup.messageIds,
              contact_key: lookup.contactKey,
              subject_key: lookup.subjectKey,
              message_id: lookup.messageId
            })))}::jsonb) AS l(idx int, company_id text, thread_id text, message_ids jsonb, contact_key text, subject_key text, message_id text)
            LEFT JOIN LATERAL (
              SELECT * FROM (
                (SELECT t.*, 0 AS rank FROM inbox_threads t WHERE t.company_id = l.company_id AND t.id = l.thread_id)
                UNION ALL
                (SELECT t.*, 1 AS rank FROM inbox_messages m JOIN inbox_threads t ON t.id = m.thread_id
                  WHERE m.company_id = l.company_id AND m.message_id = ANY (ARRAY(SELECT jsonb_array_elements_text(l.message_ids)))
                  ORDER BY m.received_at DESC LIMIT 1)
                UNION ALL
                (SELECT t.*, 2 AS rank FROM inbox_threads t
                  WHERE t.company_id = l.company_id AND t.contact_key = l.contact_key AND t.subject_key = l.subject_key
                  ORDER BY t.last_message_at DESC LIMIT 1)
              ) AS candidates ORDER BY rank LIMIT 1
            ) AS found ON true
            ORDER BY l.idx`
          return yield* Effect.forEach(rows, (row): Effect.Effect<ThreadLocation, Schema.SchemaError> =>
            row.id === null
              ? Effect.succeed({ thread: Option.none(), named: false, duplicate: row.duplicate })
              : Effect.map(decodeThread(row), (thread) => ({ thread: Option.some(thread), named: Number(row.rank) < 2, duplicate: row.duplicate })))
        }).pipe(Effect.orDie),
      addMessages: (entries) =>
        Effect.gen(function*() {
          if (entries.length === 0) return new Map()
          const messageRows = entries.map(({ message }, idx) => ({ idx, ...Schema.encodeSync(MessageRow)(message) }))
          const createdRows = entries.flatMap(({ created }) => (created === undefined ? [] : [Schema.encodeSync(ThreadRow)(created)]))
          // Threads made with their first messages in this statement: the messages' references to them are checked at its end.
          const rows = yield* sql<{ readonly added_ids: ReadonlyArray<string> } & Record<string, unknown>>`
            WITH input AS (
              SELECT * FROM jsonb_to_recordset(${jsonParam(messageRows)}::jsonb) AS m(idx int, id text, company_id text, thread_id text,
                direction text, message_id text, from_address text, to_addresses jsonb, subject text, text_body text, html_body text,
                received_at timestamptz, automatic boolean, classification text)
            ), added AS (
              INSERT INTO inbox_messages (id, company_id, thread_id, direction, message_id, from_address, to_addresses, subject,
                text_body, html_body, received_at, automatic, classification)
              SELECT id, company_id, thread_id, direction, message_id, from_address, to_addresses, subject,
                text_body, html_body, received_at, automatic, classification FROM input ORDER BY idx
              ON CONFLICT (company_id, message_id) DO NOTHING RETURNING id, thread_id, direction, received_at, classification
            ), per_thread AS (
              SELECT thread_id, count(*)::int AS n, max(received_at) AS last_at, bool_or(direction = 'inbound') AS inbound,
                (array_agg(classification ORDER BY received_at DESC) FILTER (WHERE classification IS NOT NULL))[1] AS classification
              FROM added GROUP BY thread_id
            ), created AS (
              INSERT INTO inbox_threads (id, company_id, mailbox_id, subject, subject_key, contact_email, contact_key, status, classification,
                unread, lead_id, campaign_id, campaign_recipient_id, sequence_id, sequence_execution_id, message_count, last_message_at,
                created_at, updated_at)
              -- A mailbox deleted since the message arrived leaves the thread without one, as its deletion does to earlier threads.
              SELECT t.id, t.company_id, (SELECT m.id FROM mailboxes m WHERE m.id = t.mailbox_id), t.subject, t.subject_key, t.contact_email, t.contact_key, 'open',
                coalesce(p.classification, t.classification), p.inbound, t.lead_id, t.campaign_id, t.campaign_recipient_id, t.sequence_id,
                t.sequence_execution_id, p.n, p.last_at, t.created_at, t.updated_at
              FROM jsonb_to_recordset(${jsonParam(createdRows)}::jsonb) AS t(id text, company_id text, mailbox_id text, subject text,
                subject_key text, contact_email text, contact_key text, classification text, lead_id text, campaign_id text,
                campaign_recipient_id text, sequence_id text, sequence_execution_id text, created_at timestamptz, updated_at timestamptz)
              JOIN per_thread p ON p.thread_id = t.id
              RETURNING *
            ), updated AS (
              UPDATE inbox_threads SET message_count = message_count + p.n,
                  last_message_at = greatest(last_message_at, p.last_at),
                  unread = unread OR p.inbound,
                  classification = coalesce(p.classification, inbox_threads.classification),
                  status = CASE WHEN p.inbound THEN 'open' ELSE status END,
                  updated_at = greatest(p.last_at, updated_at + interval '1 millisecond')
                FROM per_thread p WHERE inbox_threads.id = p.thread_id RETURNING inbox_threads.*
            )
            SELECT t.*, (SELECT jsonb_agg(a.id) FROM added a WHERE a.thread_id = t.id) AS added_ids
            FROM (SELECT * FROM created UNION ALL SELECT * FROM updated) AS t`
          const stored = new Map<string, ThreadRecord>()
          for (const row of rows) {
            const thread = yield* decodeThread(row)
            for (const id of row.added_ids) stored.set(id, thread)
          }
          return stored
        }).pipe(Effect.orDie),
      linkLeads: (threadIds) =>
        threadIds.length === 0 ? Effect.succeed(new Map()) : sql<{ readonly id: string; readonly lead_id: string }>`
          UPDATE inbox_threads t SET lead_id = l.id FROM leads l
          WHERE t.id = ANY (ARRAY(SELECT jsonb_array_elements_text(${jsonParam(threadIds)}::jsonb))) AND t.lead_id IS NULL AND l.company_id = t.company_id AND lower(l.email) = t.contact_key
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
      named: (id) => threads.first(sql`SELECT * FROM inbox_threads WHERE id = ${id}`).pipe(Effect.orDie),
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
