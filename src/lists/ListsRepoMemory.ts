import { type Context, Layer, Option } from "effect"
import { MemoryStore, memoryTable, type Tables } from "../storage/MemoryStore.ts"
import { movedForward, newestFirstPage } from "../storage/Windows.ts"
import { uniqueByEmail } from "./Contacts.ts"
import { type ContactListRecord, type ContactRowRecord, emailKey, type ListsRepository, searchTextOf } from "./ListsRepo.ts"

/** The memory backend's lists (see `MemoryStore`). */
export const contactListsTable = memoryTable("contactLists", (): Map<string, ContactListRecord> => new Map())

/** Each list's rows by row id, in insertion (id) order. */
export const contactRowsTable = memoryTable(
  "contactRows",
  (): Map<string, Map<string, ContactRowRecord>> => new Map()
)

const ownedList = (tables: Tables, companyId: string, listId: string) => {
  const list = tables(contactListsTable).get(listId)
  return list !== undefined && list.companyId === companyId ? list : undefined
}

const rowsIn = (tables: Tables, listId: string): ReadonlyMap<string, ContactRowRecord> =>
  tables(contactRowsTable).get(listId) ?? new Map()

const rowsOf = (tables: Tables, listId: string) => {
  const rows = tables(contactRowsTable)
  let listRows = rows.get(listId)
  if (listRows === undefined) {
    listRows = new Map()
    rows.set(listId, listRows)
  }
  return listRows
}

/** Adds the rows whose address the list lacks; answers how many. */
const insertRows = (tables: Tables, listId: string, rows: ReadonlyArray<ContactRowRecord>) => {
  const listRows = rowsOf(tables, listId)
  const present = new Set([...listRows.values()].map((row) => emailKey(row.email)))
  let added = 0
  for (const row of uniqueByEmail(rows)) {
    if (present.has(emailKey(row.email))) continue
    listRows.set(row.id, row)
    added++
  }
  return added
}

/** The memory implementation of `ListsRepository`, for the service's `ListsRepo` tag. */
export const listsMemory = <Self>(tag: Context.Key<Self, ListsRepository>) =>
  Layer.effect(tag, MemoryStore.useSync((store): ListsRepository => ({
    create: (list, rows) =>
      store.write((tables) => {
        const added = insertRows(tables, list.id, rows)
        const created = { ...list, rowCount: added }
        tables(contactListsTable).set(list.id, created)
        return { list: created, added }
      }),
    get: (companyId, id) => store.read((tables) => Option.fromNullishOr(ownedList(tables, companyId, id))),
    list: (companyId, window) =>
      store.read((tables) =>
        newestFirstPage([...tables(contactListsTable).values()].filter((list) => list.companyId === companyId), window)
      ),
    remove: (companyId, id) =>
      store.write((tables) => {
        const list = ownedList(tables, companyId, id)
        if (list === undefined) return Option.none()
        tables(contactListsTable).delete(id)
        tables(contactRowsTable).delete(id)
        return Option.some(list)
      }),
    appendRows: (companyId, listId, rows, now) =>
      store.write((tables) => {
        const list = ownedList(tables, companyId, listId)
        if (list === undefined) return Option.none()
        const added = insertRows(tables, listId, rows)
        const updated = { ...list, rowCount: list.rowCount + added, updatedAt: movedForward(list.updatedAt, now) }
        tables(contactListsTable).set(listId, updated)
        return Option.some({ list: updated, added })
      }),
    listRows: (companyId, listId, search, window) =>
      store.read((tables) => {
        if (ownedList(tables, companyId, listId) === undefined) return { rows: [], total: 0 }
        const all = [...rowsIn(tables, listId).values()]
        const needle = search?.toLowerCase() ?? ""
        const found = needle === "" ? all : all.filter((row) => searchTextOf(row).includes(needle))
        return { rows: found.slice(window.offset, window.offset + window.limit), total: found.length }
      }),
    removeRow: (companyId, listId, rowId, now) =>
      store.write((tables) => {
        const list = ownedList(tables, companyId, listId)
        const row = list === undefined ? undefined : rowsIn(tables, listId).get(rowId)
        if (list === undefined || row === undefined) return Option.none()
        rowsOf(tables, listId).delete(rowId)
        tables(contactListsTable).set(listId, {
          ...list,
          rowCount: list.rowCount - 1,
          updatedAt: movedForward(list.updatedAt, now)
        })
        return Option.some(row)
      }),
    rowsAfter: (companyId, listId, afterId, limit) =>
      store.read((tables) => {
        if (ownedList(tables, companyId, listId) === undefined) return []
        return [...rowsIn(tables, listId).values()].filter((row) => afterId === null || row.id > afterId).slice(0, limit)
      }),
    rowsByIds: (companyId, ids) =>
      store.read((tables) => {
        const wanted = new Set(ids)
        return [...tables(contactListsTable).values()]
          .filter((list) => list.companyId === companyId)
          .flatMap((list) => [...rowsIn(tables, list.id).values()].filter((row) => wanted.has(row.id)))
          .toSorted((a, b) => a.id.localeCompare(b.id))
      })
  })))
