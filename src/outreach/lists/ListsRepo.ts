import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { containing, jsonParam, toNumber } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const ContactListRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The person who made it; null for a company API key. */
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  rowCount: NumberColumn,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type ContactListRecord = typeof ContactListRecord.Type

export const ContactRowRecord = Schema.Struct({
  id: Schema.String,
  listId: Schema.String,
  /** As given (trimmed); deduplicated by its lower-case form. */
  email: Schema.String,
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  /** Further merge fields. */
  fields: Schema.Record(Schema.String, Schema.String),
  createdAt: Timestamp
})
export type ContactRowRecord = typeof ContactRowRecord.Type

/** The key an address is deduplicated and suppressed by: its lower-case form. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

/** What a row search matches: e-mail, names and company, lower-cased (stored with the row). */
export const searchTextOf = (row: ContactRowRecord): string =>
  [row.email, row.firstName, row.lastName, row.company].filter((value) => value !== null).join(" | ").toLowerCase()

const ListRow = fromColumns(ContactListRecord)
const ContactRow = fromColumns(ContactRowRecord)

export interface Appended {
  readonly list: ContactListRecord
  /** Rows stored; the others were duplicates of addresses already in the list. */
  readonly added: number
}

export type RowsPage = { readonly rows: ReadonlyArray<ContactRowRecord>; readonly total: number }

/**
 * Contact lists and their rows. Every operation is scoped by company id; rows
 * are reached only through a list of that company.
 */
export interface ListsRepository {
  /** Stores the list and its rows (deduplicated by address, ignoring case) in one transaction. */
  readonly create: (list: ContactListRecord, rows: ReadonlyArray<ContactRowRecord>) => Effect.Effect<Appended>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<ContactListRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ContactListRecord>; readonly total: number }>
  /** The deleted list (its rows go with it); none when the company has no such list. */
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<ContactListRecord>>
  /**
   * Appends rows whose address is not yet in the list (ignoring case; the first
   * of duplicates within `rows` wins), all or none. None when the company has no such list.
   */
  readonly appendRows: (
    companyId: string,
    listId: string,
    rows: ReadonlyArray<ContactRowRecord>,
    now: Date
  ) => Effect.Effect<Option.Option<Appended>>
  /** In the order they were added; `search` is a case-insensitive substring of e-mail, names or company. */
  readonly listRows: (
    companyId: string,
    listId: string,
    search: string | undefined,
    window: Window
  ) => Effect.Effect<RowsPage>
  /** The deleted row; none when the list (of that company) has no such row. */
  readonly removeRow: (
    companyId: string,
    listId: string,
    rowId: string,
    now: Date
  ) => Effect.Effect<Option.Option<ContactRowRecord>>
  /**
   * Up to `limit` rows of a list with ids after `afterId` (null: from the start),
   * in id order: how senders walk a whole list page by page without offsets.
   */
  readonly rowsAfter: (
    companyId: string,
    listId: string,
    afterId: string | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ContactRowRecord>>
  /** The rows among `ids` that belong to a list of the company, in id order (unknown ids are left out). */
  readonly rowsByIds: (companyId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ContactRowRecord>>
}

/** Rows per statement of a bulk insert: one JSON parameter, expanded by `jsonb_to_recordset`. */
const insertChunk = 5_000

export class ListsRepo extends Context.Service<ListsRepo, ListsRepository>()("lists/ListsRepo") {
  static readonly layer = Layer.effect(ListsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lists = readerOf(ListRow)
    const contactRows = readerOf(ContactRow)
    const ownedList = (companyId: string, listId: string) =>
      lists.first(sql`SELECT * FROM contact_lists WHERE company_id = ${companyId} AND id = ${listId}`)
    /** Inserts the rows a chunk at a time; answers how many were new to the list. */
    const insertRows = (listId: string, rows: ReadonlyArray<ContactRowRecord>) =>
      Effect.gen(function*() {
        let added = 0
        for (let start = 0; start < rows.length; start += insertChunk) {
          const chunk = rows.slice(start, start + insertChunk).map((row) => ({
            id: row.id,
            email: row.email,
            email_key: emailKey(row.email),
            search_text: searchTextOf(row),
            first_name: row.firstName,
            last_name: row.lastName,
            company: row.company,
            fields: row.fields,
            created_at: row.createdAt.toISOString()
          }))
          const inserted = yield* sql<{ readonly id: string }>`
            INSERT INTO contact_list_rows (id, list_id, email, email_key, search_text, first_name, last_name, company,
              fields, created_at)
            SELECT r.id, ${listId}, r.email, r.email_key, r.search_text, r.first_name, r.last_name, r.company, r.fields,
              r.created_at
            FROM jsonb_to_recordset(${jsonParam(chunk)}::jsonb) AS r(id text, email text, email_key text,
              search_text text, first_name text, last_name text, company text, fields jsonb, created_at timestamptz)
            ON CONFLICT (list_id, email_key) DO NOTHING
            RETURNING id`
          added += inserted.length
        }
        return added
      })
    const appendTo = (list: ContactListRecord, rows: ReadonlyArray<ContactRowRecord>, now: Date) =>
      Effect.gen(function*() {
        const added = yield* insertRows(list.id, rows)
        const updated = yield* lists.one(sql`
          UPDATE contact_lists SET row_count = row_count + ${added},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE id = ${list.id}
          RETURNING *`)
        return { list: updated, added }
      })
    const rowFilter = (companyId: string, listId: string, search: string | undefined) => {
      const inList = sql`list_id = ${listId} AND EXISTS (
        SELECT 1 FROM contact_lists l WHERE l.id = ${listId} AND l.company_id = ${companyId})`
      if (search === undefined || search === "") return inList
      return sql`${inList} AND search_text LIKE ${containing(search.toLowerCase())}`
    }
    return {
      create: Effect.fn("ListsRepo.create")(function*(list, rows) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const created = yield* lists.one(sql`
            INSERT INTO contact_lists (id, company_id, user_id, name, row_count, created_at, updated_at)
            VALUES (${list.id}, ${list.companyId}, ${list.userId}, ${list.name}, 0, ${list.createdAt}, ${list.updatedAt})
            RETURNING *`)
          if (rows.length === 0) return { list: created, added: 0 }
          const added = yield* insertRows(list.id, rows)
          const counted = yield* lists.one(sql`
            UPDATE contact_lists SET row_count = ${added} WHERE id = ${list.id} RETURNING *`)
          return { list: counted, added }
        }))
      }, Effect.orDie),
      get: Effect.fn("ListsRepo.get")(function*(companyId, id) {
        return yield* ownedList(companyId, id)
      }, Effect.orDie),
      list: Effect.fn("ListsRepo.list")(function*(companyId, window) {
        return yield* selectRecords(ListRow, sql, "contact_lists", sql`company_id = ${companyId}`, window)
      }, Effect.orDie),
      remove: Effect.fn("ListsRepo.remove")(function*(companyId, id) {
        return yield* lists.first(sql`
          DELETE FROM contact_lists WHERE company_id = ${companyId} AND id = ${id} RETURNING *`)
      }, Effect.orDie),
      appendRows: Effect.fn("ListsRepo.appendRows")(function*(companyId, listId, rows, now) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // The lock orders concurrent appends to one list, so that row_count stays exact.
          const list = yield* lists.first(sql`
            SELECT * FROM contact_lists WHERE company_id = ${companyId} AND id = ${listId} FOR UPDATE`)
          if (Option.isNone(list)) return Option.none()
          return Option.some(yield* appendTo(list.value, rows, now))
        }))
      }, Effect.orDie),
      listRows: Effect.fn("ListsRepo.listRows")(function*(companyId, listId, search, window) {
        const where = rowFilter(companyId, listId, search)
        // Without a search the list's kept row_count is the total: no count over 100,000 rows per page.
        const counting = search === undefined || search === ""
          ? sql<{ readonly count: unknown }>`
            SELECT row_count AS count FROM contact_lists WHERE id = ${listId} AND company_id = ${companyId}`
          : sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM contact_list_rows WHERE ${where}`
        const [rows, count] = yield* Effect.all([
          contactRows.all(sql`SELECT * FROM contact_list_rows WHERE ${where} ORDER BY id LIMIT ${window.limit}
            OFFSET ${window.offset}`),
          counting
        ])
        return { rows, total: toNumber(count[0]?.count) }
      }, Effect.orDie),
      removeRow: Effect.fn("ListsRepo.removeRow")(function*(companyId, listId, rowId, now) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const deleted = yield* contactRows.first(sql`
            DELETE FROM contact_list_rows r USING contact_lists l
            WHERE r.id = ${rowId} AND r.list_id = ${listId} AND l.id = r.list_id AND l.company_id = ${companyId}
            RETURNING r.*`)
          if (Option.isNone(deleted)) return deleted
          yield* sql`
            UPDATE contact_lists SET row_count = row_count - 1,
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE id = ${listId}`
          return deleted
        }))
      }, Effect.orDie),
      rowsAfter: Effect.fn("ListsRepo.rowsAfter")(function*(companyId, listId, afterId, limit) {
        return yield* contactRows.all(sql`
          SELECT * FROM contact_list_rows WHERE ${rowFilter(companyId, listId, undefined)}
            AND id > ${afterId ?? ""} ORDER BY id LIMIT ${limit}`)
      }, Effect.orDie),
      rowsByIds: Effect.fn("ListsRepo.rowsByIds")(function*(companyId, ids) {
        if (ids.length === 0) return []
        return yield* contactRows.all(sql`
          SELECT * FROM contact_list_rows
          WHERE ${sql.in("id", ids)} AND list_id IN (SELECT id FROM contact_lists WHERE company_id = ${companyId})
          ORDER BY id`)
      }, Effect.orDie)
    }
  }))
}
