import { Effect } from "effect"
import { ListNotFound, NotSuppressed, RowNotFound } from "./Errors.ts"
import type { HttpServerRequest } from "effect/http"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { uploadedFile } from "../../http/Uploads.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { AppendRows, ContactList, ContactRow, NewList, NewSuppression, Suppression } from "./Api.ts"
import { type ContactInput, toRowRecord } from "./Contacts.ts"
import { readListCsv } from "./CsvImport.ts"
import { Leads } from "../leads/Leads.ts"
import { LeadsConfig } from "../leads/LeadsConfig.ts"
import { type Appended, type ContactListRecord, type ContactRowRecord, ListsRepo } from "./ListsRepo.ts"
import { type SuppressionRecord, Suppressions } from "./Suppressions.ts"

/** Contact lists and the suppression list of the caller's company. Decisions in docs/lists.md. */

export const toContactList = (record: ContactListRecord): typeof ContactList.Type => ({
  id: record.id,
  name: record.name,
  rowCount: record.rowCount,
  created_date: record.createdAt.toISOString(),
  updated_date: record.updatedAt.toISOString()
})

export const toContactRow = (record: ContactRowRecord): typeof ContactRow.Type => ({
  id: record.id,
  listId: record.listId,
  email: record.email,
  firstName: record.firstName,
  lastName: record.lastName,
  company: record.company,
  fields: record.fields,
  created_date: record.createdAt.toISOString()
})

const toSuppression = (record: SuppressionRecord): typeof Suppression.Type => ({
  email: record.email,
  reason: record.reason,
  created_date: record.createdAt.toISOString()
})

const listNotFound = (id: string) => orRefuse(() => new ListNotFound({ id }))

const appendResult = (appended: Appended, offered: number) => ({
  list: toContactList(appended.list),
  added: appended.added,
  duplicates: offered - appended.added
})

export const create = Effect.fn("Lists.create")(function*(input: typeof NewList.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const id = newId("lst")
  const rows = (input.rows ?? []).map((row) => toRowRecord(id, row, now))
  const created = yield* ListsRepo.use((repo) =>
    repo.create({
      id,
      companyId: principal.companyId,
      userId: principal.userId,
      name: input.name,
      rowCount: 0,
      createdAt: now,
      updatedAt: now
    }, rows)
  )
  yield* upsertLeads(principal.companyId, rows)
  return toContactList(created.list)
})

export const list = Effect.fn("Lists.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* ListsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toContactList), total, request)
})

export const get = Effect.fn("Lists.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return toContactList(yield* listNotFound(id)(yield* ListsRepo.use((repo) => repo.get(principal.companyId, id))))
})

export const remove = Effect.fn("Lists.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  return toContactList(yield* listNotFound(id)(yield* ListsRepo.use((repo) => repo.remove(principal.companyId, id))))
})

/** Every row's person becomes (or fills in) a lead of the company. */
const upsertLeads = (companyId: string, rows: ReadonlyArray<ContactRowRecord>) =>
  Leads.use((leads) =>
    leads.upsert(companyId, rows.map(({ email, firstName, lastName, company, fields }) => ({ email, firstName, lastName, company, fields })))
  )

const append = (companyId: string, listId: string, rows: ReadonlyArray<ContactInput>) =>
  Effect.gen(function*() {
    const now = yield* currentDate
    const records = rows.map((row) => toRowRecord(listId, row, now))
    const appended = yield* ListsRepo.use((repo) => repo.appendRows(companyId, listId, records, now))
    const result = appendResult(yield* listNotFound(listId)(appended), records.length)
    yield* upsertLeads(companyId, records)
    return result
  })

export const appendRows = Effect.fn("Lists.appendRows")(function*(listId: string, input: typeof AppendRows.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  return yield* append(principal.companyId, listId, input.rows)
})

export const listRows = Effect.fn("Lists.listRows")(function*(
  listId: string,
  request: PageRequest,
  search: string | undefined
) {
  const { principal } = yield* Authorized("campaigns:read")
  yield* listNotFound(listId)(yield* ListsRepo.use((repo) => repo.get(principal.companyId, listId)))
  const { rows, total } = yield* ListsRepo.use((repo) =>
    repo.listRows(principal.companyId, listId, search?.trim(), windowOf(request))
  )
  return toPage(rows.map(toContactRow), total, request)
})

export const removeRow = Effect.fn("Lists.removeRow")(function*(listId: string, rowId: string) {
  const { principal } = yield* Authorized("campaigns:write")
  const now = yield* currentDate
  const removed = yield* ListsRepo.use((repo) => repo.removeRow(principal.companyId, listId, rowId, now))
  return toContactRow(yield* orRefuse(() => new RowNotFound({ listId, rowId }))(removed))
})

/** Appends the valid rows of an uploaded CSV file; invalid ones are counted and reported by line. */
export const importCsv = Effect.fn("Lists.importCsv")(function*(
  listId: string,
  request: HttpServerRequest.HttpServerRequest
) {
  const { principal } = yield* Authorized("campaigns:write")
  const config = yield* LeadsConfig
  yield* listNotFound(listId)(yield* ListsRepo.use((repo) => repo.get(principal.companyId, listId)))
  return yield* Effect.scoped(Effect.gen(function*() {
    const file = yield* uploadedFile(request, "file", config.importMaxBytes)
    const contacts = yield* readListCsv(file.path)
    const appended = yield* append(principal.companyId, listId, contacts.rows)
    return { ...appended, invalid: contacts.invalid, errors: contacts.errors }
  }))
})

export const listSuppressions = Effect.fn("Lists.listSuppressions")(function*(
  request: PageRequest,
  search: string | undefined
) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* Suppressions.use((repo) =>
    repo.list(principal.companyId, search?.trim(), windowOf(request))
  )
  return toPage(rows.map(toSuppression), total, request)
})

export const addSuppression = Effect.fn("Lists.addSuppression")(function*(input: typeof NewSuppression.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  return toSuppression(yield* Suppressions.use((repo) => repo.add(principal.companyId, input.email, "manual")))
})

export const removeSuppression = Effect.fn("Lists.removeSuppression")(function*(email: string) {
  const { principal } = yield* Authorized("campaigns:write")
  const removed = yield* Suppressions.use((repo) => repo.remove(principal.companyId, email))
  return toSuppression(yield* orRefuse(() => new NotSuppressed({ email }))(removed))
})
