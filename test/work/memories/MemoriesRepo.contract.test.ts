import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { MemoriesRepo, type MemoryRecord } from "../../../src/work/memories/MemoriesRepo.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")

const fixture = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const repo = yield* MemoriesRepo
  const person = { companyId: tenant.companyId, userId: tenant.userId }
  const company = { companyId: tenant.companyId, userId: null }
  const create = (overrides: Partial<MemoryRecord>) =>
    repo.create({
      id: newId("mem"),
      ...person,
      content: "fact",
      category: "general",
      isActive: true,
      sourceChatId: null,
      sourceMessageId: null,
      metadata: {},
      createdAt: t0,
      updatedAt: t0,
      ...overrides
    })
  return { repo, person, company, create }
})

const all = { includeInactive: true }
const window = { offset: 0, limit: 10 }

for (const backend of backends) {
  it.layer(backend.storage)(`MemoriesRepo contract on ${backend.name}`, (it) => {
    it.effect("an owner sees only their own memories, filtered and newest first", () =>
      Effect.gen(function*() {
        const { repo, person, company, create } = yield* fixture
        const a = yield* create({ content: "a", category: "style", sourceChatId: "chat_1", metadata: { score: 0.5 } })
        const b = yield* create({ content: "b", isActive: false })
        const c = yield* create({ content: "c", userId: null })
        expect(yield* repo.list(person, all, window)).toEqual({ rows: [b, a], total: 2 })
        expect(yield* repo.list(person, { includeInactive: false }, window)).toEqual({ rows: [a], total: 1 })
        expect(yield* repo.list(person, { ...all, category: "style" }, window)).toEqual({ rows: [a], total: 1 })
        expect(yield* repo.list(company, all, window)).toEqual({ rows: [c], total: 1 })
        expect((yield* repo.list({ companyId: "cmp_other", userId: person.userId }, all, window)).total).toBe(0)
      }))

    it.effect("update and remove act on the owner's memory only", () =>
      Effect.gen(function*() {
        const { repo, person, company, create } = yield* fixture
        const memory = yield* create({ metadata: { a: 1 } })
        expect(Option.isNone(yield* repo.update(company, memory.id, { content: "x" }, t0))).toBe(true)
        const changed = Option.getOrThrow(yield* repo.update(person, memory.id, { isActive: false, content: "new" }, t0))
        expect(changed).toEqual({ ...memory, isActive: false, content: "new", updatedAt: new Date(t0.getTime() + 1) })
        expect(Option.isNone(yield* repo.remove(company, memory.id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.remove(person, memory.id))).toEqual(changed)
        expect((yield* repo.list(person, all, window)).total).toBe(0)
      }))
  })
}
