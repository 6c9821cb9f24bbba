import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { jsonParam } from "../storage/Rows.ts"
import { selectPage, type Window } from "../storage/Windows.ts"

export interface MemoryRecord {
  readonly id: string
  readonly companyId: string
  /** The person the memory is about; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  readonly userId: string | null
  readonly content: string
  readonly category: string
  readonly isActive: boolean
  readonly sourceChatId: string | null
  readonly sourceMessageId: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface MemoryChange {
  readonly content?: string | undefined
  readonly category?: string | undefined
  readonly isActive?: boolean | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

export interface MemoryFilter {
  readonly includeInactive: boolean
  readonly category?: string | undefined
}

/** One owner's memories in one company: every operation is scoped by both. */
export interface MemoryOwner {
  readonly companyId: string
  readonly userId: string | null
}

export interface MemoriesRepository {
  readonly create: (memory: MemoryRecord) => Effect.Effect<MemoryRecord>
  /** Newest first. */
  readonly list: (
    owner: MemoryOwner,
    filter: MemoryFilter,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<MemoryRecord>; readonly total: number }>
  readonly update: (
    owner: MemoryOwner,
    id: string,
    change: MemoryChange,
    now: Date
  ) => Effect.Effect<Option.Option<MemoryRecord>>
  /** The deleted memory; none when the owner has no such memory. */
  readonly remove: (owner: MemoryOwner, id: string) => Effect.Effect<Option.Option<MemoryRecord>>
}

export class MemoriesRepo extends Context.Service<MemoriesRepo, MemoriesRepository>()("memories/MemoriesRepo") {
  static readonly layer = Layer.effect(MemoriesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const owned = (owner: MemoryOwner) =>
      owner.userId === null
        ? sql`company_id = ${owner.companyId} AND user_id IS NULL`
        : sql`company_id = ${owner.companyId} AND user_id = ${owner.userId}`
    const single = (rows: ReadonlyArray<MemoryRow>) => Option.map(Option.fromNullishOr(rows[0]), fromRow)
    return {
      create: Effect.fn("MemoriesRepo.create")(function*(memory) {
        const rows = yield* sql<MemoryRow>`
          INSERT INTO memories (id, company_id, user_id, content, category, is_active, source_chat_id,
            source_message_id, metadata, created_at, updated_at)
          VALUES (${memory.id}, ${memory.companyId}, ${memory.userId}, ${memory.content}, ${memory.category},
            ${memory.isActive}, ${memory.sourceChatId}, ${memory.sourceMessageId}, ${jsonParam(memory.metadata)}::jsonb,
            ${memory.createdAt}, ${memory.updatedAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      list: Effect.fn("MemoriesRepo.list")(function*(owner, filter, window) {
        const where = sql.and([
          owned(owner),
          ...(filter.includeInactive ? [] : [sql`is_active`]),
          ...(filter.category === undefined ? [] : [sql`category = ${filter.category}`])
        ])
        const page = yield* selectPage<MemoryRow>(sql, "memories", where, window)
        return { rows: page.rows.map(fromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("MemoriesRepo.update")(function*(owner, id, change, now) {
        const rows = yield* sql<MemoryRow>`
          UPDATE memories SET
            content = coalesce(${change.content ?? null}, content),
            category = coalesce(${change.category ?? null}, category),
            is_active = coalesce(${change.isActive ?? null}, is_active),
            metadata = coalesce(${change.metadata === undefined ? null : jsonParam(change.metadata)}::jsonb, metadata),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE ${owned(owner)} AND id = ${id}
          RETURNING *`
        return single(rows)
      }, Effect.orDie),
      remove: Effect.fn("MemoriesRepo.remove")(function*(owner, id) {
        return single(yield* sql<MemoryRow>`DELETE FROM memories WHERE ${owned(owner)} AND id = ${id} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}

interface MemoryRow {
  readonly id: string
  readonly company_id: string
  readonly user_id: string | null
  readonly content: string
  readonly category: string
  readonly is_active: boolean
  readonly source_chat_id: string | null
  readonly source_message_id: string | null
  readonly metadata: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: MemoryRow): MemoryRecord => ({
  id: row.id,
  companyId: row.company_id,
  userId: row.user_id,
  content: row.content,
  category: row.category,
  isActive: row.is_active,
  sourceChatId: row.source_chat_id,
  sourceMessageId: row.source_message_id,
  metadata: row.metadata,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
