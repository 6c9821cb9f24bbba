import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, JsonObject, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const MemoryRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The person the memory is about; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  userId: Schema.NullOr(Schema.String),
  content: Schema.String,
  category: Schema.String,
  isActive: Schema.Boolean,
  sourceChatId: Schema.NullOr(Schema.String),
  sourceMessageId: Schema.NullOr(Schema.String),
  metadata: JsonObject,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type MemoryRecord = typeof MemoryRecord.Type

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
  /**
   * The owner's active memories best matching `query` (any of its words,
   * stemmed, ranked by full-text rank, then newest), or the newest without one.
   */
  readonly recall: (
    owner: MemoryOwner,
    filter: { readonly query?: string | undefined; readonly category?: string | undefined },
    limit: number
  ) => Effect.Effect<ReadonlyArray<MemoryRecord>>
  /** The deleted memory; none when the owner has no such memory. */
  readonly remove: (owner: MemoryOwner, id: string) => Effect.Effect<Option.Option<MemoryRecord>>
}

const MemoryRow = fromColumns(MemoryRecord)

export class MemoriesRepo extends Context.Service<MemoriesRepo, MemoriesRepository>()("memories/MemoriesRepo") {
  static readonly layer = Layer.effect(MemoriesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const owned = (owner: MemoryOwner) =>
      owner.userId === null
        ? sql`company_id = ${owner.companyId} AND user_id IS NULL`
        : sql`company_id = ${owner.companyId} AND user_id = ${owner.userId}`
    const records = readerOf(MemoryRow)
    return {
      create: Effect.fn("MemoriesRepo.create")(function*(memory) {
        return yield* records.one(sql`
          INSERT INTO memories (id, company_id, user_id, content, category, is_active, source_chat_id,
            source_message_id, metadata, created_at, updated_at)
          VALUES (${memory.id}, ${memory.companyId}, ${memory.userId}, ${memory.content}, ${memory.category},
            ${memory.isActive}, ${memory.sourceChatId}, ${memory.sourceMessageId}, ${jsonParam(memory.metadata)}::jsonb,
            ${memory.createdAt}, ${memory.updatedAt})
          RETURNING *`)
      }, Effect.orDie),
      list: Effect.fn("MemoriesRepo.list")(function*(owner, filter, window) {
        const where = sql.and([
          owned(owner),
          ...(filter.includeInactive ? [] : [sql`is_active`]),
          ...(filter.category === undefined ? [] : [sql`category = ${filter.category}`])
        ])
        return yield* selectRecords(MemoryRow, sql, "memories", where, window)
      }, Effect.orDie),
      update: Effect.fn("MemoriesRepo.update")(function*(owner, id, change, now) {
        return yield* records.first(sql`
          UPDATE memories SET
            content = coalesce(${change.content ?? null}, content),
            category = coalesce(${change.category ?? null}, category),
            is_active = coalesce(${change.isActive ?? null}, is_active),
            metadata = coalesce(${change.metadata === undefined ? null : jsonParam(change.metadata)}::jsonb, metadata),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE ${owned(owner)} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      recall: Effect.fn("MemoriesRepo.recall")(function*(owner, filter, limit) {
        const category = filter.category === undefined ? [] : [sql`category = ${filter.category}`]
        if (filter.query === undefined || filter.query.trim() === "") {
          return yield* records.all(sql`
            SELECT * FROM memories WHERE ${sql.and([owned(owner), sql`is_active`, ...category])}
            ORDER BY id DESC LIMIT ${limit}`)
        }
        // plainto_tsquery drops stop words and stems; its terms joined by "or" instead of "and": any word matches.
        const terms = sql`replace(plainto_tsquery('english', ${filter.query})::text, '&', '|')::tsquery`
        return yield* records.all(sql`
          SELECT * FROM memories
          WHERE ${sql.and([owned(owner), sql`is_active`, ...category, sql`to_tsvector('english', content) @@ ${terms}`])}
          ORDER BY ts_rank(to_tsvector('english', content), ${terms}) DESC, id DESC LIMIT ${limit}`)
      }, Effect.orDie),
      remove: Effect.fn("MemoriesRepo.remove")(function*(owner, id) {
        return yield* records.first(sql`DELETE FROM memories WHERE ${owned(owner)} AND id = ${id} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
