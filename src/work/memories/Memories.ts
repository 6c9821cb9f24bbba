import { Effect, Option, type Schema } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Memory, MemoryPatch, MemoryQuery, NewMemory } from "./Api.ts"
import { MemoryNotFound } from "./Errors.ts"
import { MemoriesRepo, type MemoryOwner, type MemoryRecord } from "./MemoriesRepo.ts"

/**
 * Memories are always the caller's own in the company of the path: a
 * personal access key's user's, or a company key's creator's.
 */

export const toMemory = (record: MemoryRecord): typeof Memory.Type => ({
  id: record.id,
  content: record.content,
  category: record.category,
  isActive: record.isActive,
  sourceChatId: record.sourceChatId,
  sourceMessageId: record.sourceMessageId,
  metadata: record.metadata,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

/** The path's company must be the caller's (another company → 404); the owner is the caller. */
const ownerIn = (companyId: string) =>
  Effect.gen(function*() {
    yield* Authorized("memories:use")
    const principal = yield* requireCompany(companyId)
    return { companyId: principal.companyId, userId: principal.userId } satisfies MemoryOwner
  })

const found = (id: string) => (record: Option.Option<MemoryRecord>) =>
  Effect.map(orRefuse(() => new MemoryNotFound({ id }))(record), toMemory)

export const create = Effect.fn("Memories.create")(function*(companyId: string, input: typeof NewMemory.Type) {
  const owner = yield* ownerIn(companyId)
  const now = yield* currentDate
  const created = yield* MemoriesRepo.use((repo) =>
    repo.create({
      id: newId("mem"),
      ...owner,
      content: input.content,
      category: input.category ?? "general",
      isActive: true,
      sourceChatId: input.sourceChatId ?? null,
      sourceMessageId: input.sourceMessageId ?? null,
      metadata: input.metadata ?? {},
      createdAt: now,
      updatedAt: now
    })
  )
  return toMemory(created)
})

export const list = Effect.fn("Memories.list")(function*(
  companyId: string,
  query: Schema.Struct.Type<typeof MemoryQuery>
) {
  const owner = yield* ownerIn(companyId)
  const request = pageRequest(query, 50)
  const { rows, total } = yield* MemoriesRepo.use((repo) =>
    repo.list(owner, { includeInactive: query.includeInactive === "true", category: query.category }, windowOf(request))
  )
  return { items: rows.map(toMemory), total, page: request.page, pageSize: request.pageSize }
})

export const update = Effect.fn("Memories.update")(function*(
  companyId: string,
  id: string,
  patch: typeof MemoryPatch.Type
) {
  const owner = yield* ownerIn(companyId)
  const now = yield* currentDate
  return yield* found(id)(yield* MemoriesRepo.use((repo) => repo.update(owner, id, patch, now)))
})

export const remove = Effect.fn("Memories.remove")(function*(companyId: string, id: string) {
  const owner = yield* ownerIn(companyId)
  return yield* found(id)(yield* MemoriesRepo.use((repo) => repo.remove(owner, id)))
})

/** The caller's active memories matching `query` (any of its words) and `category`, best first; the newest without a query. */
export const recall = Effect.fn("Memories.recall")(function*(
  companyId: string,
  filter: { readonly query?: string | undefined; readonly category?: string | undefined },
  limit: number
) {
  const owner = yield* ownerIn(companyId)
  return (yield* MemoriesRepo.use((repo) => repo.recall(owner, filter, limit))).map(toMemory)
})
