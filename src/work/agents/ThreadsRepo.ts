import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

/** Who a thread is with and whose it is: one agent or employee of a company, and the user who talks to it. */
export interface ThreadOwner {
  readonly companyId: string
  readonly ownerKind: "agent" | "employee"
  readonly ownerId: string
  readonly userId: string
}

export const ThreadRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  ownerKind: Schema.Literals(["agent", "employee"]),
  ownerId: Schema.String,
  userId: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  title: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type ThreadRecord = typeof ThreadRecord.Type

export const ToolCallRecord = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.Unknown })

export const MessageRecord = Schema.Struct({
  id: Schema.String,
  threadId: Schema.String,
  seq: Schema.Number,
  role: Schema.Literals(["user", "assistant", "tool"]),
  content: Schema.String,
  /** The tools an assistant turn called. */
  toolCalls: Schema.NullOr(Schema.Array(ToolCallRecord)),
  /** The call a tool turn answers. */
  toolCallId: Schema.NullOr(Schema.String),
  createdAt: Timestamp
})
export type MessageRecord = typeof MessageRecord.Type

/** A message to add: its place (`seq`) is given when it is stored. */
export type NewMessage = Omit<MessageRecord, "seq" | "threadId">

export interface ThreadsRepository {
  readonly create: (thread: ThreadRecord) => Effect.Effect<ThreadRecord>
  readonly get: (owner: ThreadOwner, id: string) => Effect.Effect<Option.Option<ThreadRecord>>
  /** Newest first. */
  readonly list: (
    owner: ThreadOwner,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ThreadRecord>; readonly total: number }>
  /** Oldest first. */
  readonly messages: (threadId: string) => Effect.Effect<ReadonlyArray<MessageRecord>>
  /** Adds messages after the thread's last (two conversations on one thread at once are put one after the other). */
  readonly append: (threadId: string, messages: ReadonlyArray<NewMessage>, now: Date) => Effect.Effect<void>
}

const ThreadRow = fromColumns(ThreadRecord)
const MessageRow = fromColumns(MessageRecord)

export class ThreadsRepo extends Context.Service<ThreadsRepo, ThreadsRepository>()("agents/ThreadsRepo") {
  static readonly layer = Layer.effect(ThreadsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const threads = readerOf(ThreadRow)
    const messages = readerOf(MessageRow)
    const owned = (owner: ThreadOwner) =>
      sql`company_id = ${owner.companyId} AND owner_kind = ${owner.ownerKind} AND owner_id = ${owner.ownerId} AND user_id = ${owner.userId}`
    return {
      create: Effect.fn("ThreadsRepo.create")(function*(thread: ThreadRecord) {
        return yield* threads.one(sql`
          INSERT INTO agent_threads (id, company_id, owner_kind, owner_id, user_id, project_id, title, created_at, updated_at)
          VALUES (${thread.id}, ${thread.companyId}, ${thread.ownerKind}, ${thread.ownerId}, ${thread.userId},
            ${thread.projectId}, ${thread.title}, ${thread.createdAt}, ${thread.updatedAt})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("ThreadsRepo.get")(function*(owner: ThreadOwner, id: string) {
        return yield* threads.first(sql`SELECT * FROM agent_threads WHERE ${owned(owner)} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("ThreadsRepo.list")(
        (owner: ThreadOwner, window: Window) => selectRecords(ThreadRow, sql, "agent_threads", owned(owner), window),
        Effect.orDie
      ),
      messages: Effect.fn("ThreadsRepo.messages")(function*(threadId: string) {
        return yield* messages.all(sql`SELECT * FROM agent_messages WHERE thread_id = ${threadId} ORDER BY seq`)
      }, Effect.orDie),
      append: Effect.fn("ThreadsRepo.append")(
        (threadId: string, added: ReadonlyArray<NewMessage>, now: Date) =>
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT id FROM agent_threads WHERE id = ${threadId} FOR UPDATE`
            const [last] = yield* sql<{ readonly seq: number | null }>`
              SELECT max(seq) AS seq FROM agent_messages WHERE thread_id = ${threadId}`
            let seq = last?.seq ?? 0
            for (const message of added) {
              seq += 1
              yield* sql`
                INSERT INTO agent_messages (id, thread_id, seq, role, content, tool_calls, tool_call_id, created_at)
                VALUES (${message.id}, ${threadId}, ${seq}, ${message.role}, ${message.content},
                  ${message.toolCalls === null ? null : jsonParam(message.toolCalls)}::jsonb, ${message.toolCallId},
                  ${message.createdAt})`
            }
            yield* sql`UPDATE agent_threads SET updated_at = greatest(${now}::timestamptz, updated_at) WHERE id = ${threadId}`
          })),
        Effect.orDie
      )
    }
  }))
}
