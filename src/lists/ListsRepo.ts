import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { containing, jsonParam, toNumber } from "../storage/Rows.ts"
import { selectPage, type Window } from "../storage/Windows.ts"
import { emailKey, searchTextOf } from "./Contacts.ts"

export interface ContactListRecord {
  readonly id: string
  readonly companyId: string
  /** The person who made it; null for a company API key. */
  readonly userId: string | null
  readonly name: string
  readonly rowCount: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface ContactRowRecord {
  readonly id: string
  readonly listId: string
  /** As given (trimmed); deduplicated by its lower-case form. */
  readonly email: string
  readonly firstName: string | null
  readonly lastName: string | null
  readonly company: string | null
  /** Further merge fields. */
  readonly fields: Readonly<Record<string, string>>
  readonly createdAt: Date
}

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
    const ownedList = (companyId: string, listId: string) =>
      sql<ListRow>`SELECT * FROM contact_lists WHERE company_id = ${companyId} AND id = ${listId}`
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
    const appendTo = (list: ListRow, rows: ReadonlyArray<ContactRowRecord>, now: Date) =>
      Effect.gen(function*() {
        const added = yield* insertRows(list.id, rows)
        const updated = yield* sql<ListRow>`
          UPDATE contact_lists SET row_count = row_count + ${added},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE id = ${list.id}
          RETURNING *`
        return { list: listFromRow(updated[0]), added }
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
          const created = yield* sql<ListRow>`
            INSERT INTO contact_lists (id, company_id, user_id, name, row_count, created_at, updated_at)
            VALUES (${list.id}, ${list.companyId}, ${list.userId}, ${list.name}, 0, ${list.createdAt}, ${list.updatedAt})
            RETURNING *`
          if (rows.length === 0) return { list: listFromRow(created[0]), added: 0 }
          const added = yield* insertRows(list.id, rows)
          const counted = yield* sql<ListRow>`
            UPDATE contact_lists SET row_count = ${added} WHERE id = ${list.id} RETURNING *`
          return { list: listFromRow(counted[0]), added }
        }))
      }, Effect.orDie),
      get: Effect.fn("ListsRepo.get")(function*(companyId, id) {
        const rows = yield* ownedList(companyId, id)
        return Option.map(Option.fromNullishOr(rows[0]), listFromRow)
      }, Effect.orDie),
      list: Effect.fn("ListsRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<ListRow>(sql, "contact_lists", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(listFromRow), total: page.total }
      }, Effect.orDie),
      remove: Effect.fn("ListsRepo.remove")(function*(companyId, id) {
        const rows = yield* sql<ListRow>`
          DELETE FROM contact_lists WHERE company_id = ${companyId} AND id = ${id} RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), listFromRow)
      }, Effect.orDie),
      appendRows: Effect.fn("ListsRepo.appendRows")(function*(companyId, listId, rows, now) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // The lock orders concurrent appends to one list, so that row_count stays exact.
          const lists = yield* sql<ListRow>`
            SELECT * FROM contact_lists WHERE company_id = ${companyId} AND id = ${listId} FOR UPDATE`
          if (lists.length === 0) return Option.none()
          return Option.some(yield* appendTo(lists[0], rows, now))
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
          sql<RowRow>`SELECT * FROM contact_list_rows WHERE ${where} ORDER BY id LIMIT ${window.limit}
            OFFSET ${window.offset}`,
          counting
        ])
        return { rows: rows.map(rowFromRow), total: toNumber(count[0]?.count) }
      }, Effect.orDie),
      removeRow: Effect.fn("ListsRepo.removeRow")(function*(companyId, listId, rowId, now) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const deleted = yield* sql<RowRow>`
            DELETE FROM contact_list_rows r USING contact_lists l
            WHERE r.id = ${rowId} AND r.list_id = ${listId} AND l.id = r.list_id AND l.company_id = ${companyId}
            RETURNING r.*`
          if (deleted.length === 0) return Option.none()
          yield* sql`
            UPDATE contact_lists SET row_count = row_count - 1,
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE id = ${listId}`
          return Option.some(rowFromRow(deleted[0]))
        }))
      }, Effect.orDie),
      rowsAfter: Effect.fn("ListsRepo.rowsAfter")(function*(companyId, listId, afterId, limit) {
        const rows = yield* sql<RowRow>`
          SELECT * FROM contact_list_rows WHERE ${rowFilter(companyId, listId, undefined)}
            AND id > ${afterId ?? ""} ORDER BY id LIMIT ${limit}`
        return rows.map(rowFromRow)
      }, Effect.orDie),
      rowsByIds: Effect.fn("ListsRepo.rowsByIds")(function*(companyId, ids) {
        if (ids.length === 0) return []
        const rows = yield* sql<RowRow>`
          SELECT * FROM contact_list_rows
          WHERE ${sql.in("id", ids)} AND list_id IN (SELECT id FROM contact_lists WHERE company_id = ${companyId})
          ORDER BY id`
        return rows.map(rowFromRow)
      }, Effect.orDie)
    }
  }))
}

interface ListRow {
  readonly id: string
  readonly company_id: string
  readonly user_id: string | null
  readonly name: string
  readonly row_count: number
  readonly created_at: Date
  readonly updated_at: Date
}

interface RowRow {
  readonly id: string
  readonly list_id: string
  readonly email: string
  readonly first_name: string | null
  readonly last_name: string | null
  readonly company: string | null
  readonly fields: Record<string, string>
  readonly created_at: Date
}

const listFromRow = (row: ListRow): ContactListRecord => ({
  id: row.id,
  companyId: row.company_id,
  userId: row.user_id,
  name: row.name,
  rowCount: Number(row.row_count),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

const rowFromRow = (row: RowRow): ContactRowRecord => ({
  id: row.id,
  listId: row.list_id,
  email: row.email,
  firstName: row.first_name,
  lastName: row.last_name,
  company: row.company,
  fields: row.fields,
  createdAt: new Date(row.created_at)
})
