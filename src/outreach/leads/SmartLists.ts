import { Effect, Result } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import { SmartListNotFound } from "./Errors.ts"
import { decodeFilter, type LeadFilter } from "./Filter.ts"
import { toLead } from "./Leads.ts"
import type { NewSmartList, SmartList, SmartListPatch } from "./SmartListsApi.ts"
import { type SmartListRecord, SmartListsRepo } from "./SmartListsRepo.ts"

/** Smart lists of the caller's company: saved filters over its leads (docs/leads.md). */

const toSmartList = (record: SmartListRecord): typeof SmartList.Type => ({
  id: record.id,
  name: record.name,
  filter: record.filter,
  created_date: record.createdAt.toISOString(),
  updated_date: record.updatedAt.toISOString()
})

const notFound = (id: string) => orRefuse(() => new SmartListNotFound({ id }))

/** The filter decoded, or the 400 naming the path of its bad condition. */
const decoded = (filter: unknown) => Result.match(decodeFilter(filter), { onSuccess: Effect.succeed, onFailure: Effect.fail })

/** A smart list of the company with its decoded filter: what campaigns and sequences resolve a `smartListId` to. */
export const smartListOf = (companyId: string, id: string) =>
  Effect.gen(function*() {
    const list = yield* notFound(id)(yield* SmartListsRepo.use((repo) => repo.get(companyId, id)))
    const filter: LeadFilter = yield* decoded(list.filter)
    return { list, filter }
  })

export const create = Effect.fn("SmartLists.create")(function*(input: typeof NewSmartList.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  yield* decoded(input.filter)
  const now = yield* currentDate
  const created = yield* SmartListsRepo.use((repo) =>
    repo.create({ id: newId("sml"), companyId: principal.companyId, name: input.name, filter: input.filter, createdAt: now, updatedAt: now })
  )
  return toSmartList(created)
})

export const list = Effect.fn("SmartLists.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* SmartListsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toSmartList), total, request)
})

export const get = Effect.fn("SmartLists.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return toSmartList(yield* notFound(id)(yield* SmartListsRepo.use((repo) => repo.get(principal.companyId, id))))
})

export const update = Effect.fn("SmartLists.update")(function*(id: string, patch: typeof SmartListPatch.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(patch.companyId)
  if (patch.filter !== undefined) yield* decoded(patch.filter)
  const now = yield* currentDate
  const updated = yield* SmartListsRepo.use((repo) =>
    repo.update(principal.companyId, id, { name: patch.name, filter: patch.filter }, now)
  )
  return toSmartList(yield* notFound(id)(updated))
})

export const remove = Effect.fn("SmartLists.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  return toSmartList(yield* notFound(id)(yield* SmartListsRepo.use((repo) => repo.remove(principal.companyId, id))))
})

export const leads = Effect.fn("SmartLists.leads")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { filter } = yield* smartListOf(principal.companyId, id)
  const now = yield* currentDate
  const { rows, total } = yield* SmartListsRepo.use((repo) => repo.leads(principal.companyId, filter, now, windowOf(request)))
  return toPage(rows.map(toLead), total, request)
})
