import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { toRowRecord } from "../../../src/outreach/lists/Contacts.ts"
import { type ContactRowRecord, ListsRepo } from "../../../src/outreach/lists/ListsRepo.ts"
import { Suppressions } from "../../../src/outreach/lists/Suppressions.ts"
import { newId } from "../../../src/platform/Ids.ts"
import { backends, seedTenant } from "../../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")
const t1 = new Date("2026-06-01T09:00:00Z")

const fixture = Effect.gen(function*() {
  const tenant = yield* seedTenant()
  const repo = yield* ListsRepo
  const rows = (listId: string, emails: ReadonlyArray<string>) =>
    emails.map((email) => toRowRecord(listId, { email, firstName: `F ${email}` }, t0))
  const create = (emails: ReadonlyArray<string> = []) => {
    const id = newId("lst")
    return repo.create(
      { id, companyId: tenant.companyId, userId: tenant.userId, name: "List", rowCount: 0, createdAt: t0, updatedAt: t0 },
      rows(id, emails)
    )
  }
  return { tenant, repo, rows, create }
})

for (const backend of backends) {
  it.layer(backend.storage)(`ListsRepo contract on ${backend.name}`, (it) => {
    it.effect("create stores the list and its rows once per address, scoped by company", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const { list, added } = yield* create(["a@x.io", "B@x.io", "b@X.io", "c@x.io"])
        expect({ added, rowCount: list.rowCount }).toEqual({ added: 3, rowCount: 3 })
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, list.id))).toEqual(list)
        expect(Option.isNone(yield* repo.get("cmp_other", list.id))).toBe(true)
        const page = yield* repo.listRows(tenant.companyId, list.id, undefined, { offset: 0, limit: 10 })
        expect(page.rows.map((row) => row.email)).toEqual(["a@x.io", "B@x.io", "c@x.io"])
        expect(page.rows[0]).toMatchObject({ listId: list.id, firstName: "F a@x.io", lastName: null, fields: {} })
        expect((yield* repo.listRows("cmp_other", list.id, undefined, { offset: 0, limit: 10 })).total).toBe(0)
      }))

    it.effect("append adds only new addresses, counts them and moves updatedAt; other companies' lists are none", () =>
      Effect.gen(function*() {
        const { tenant, repo, rows, create } = yield* fixture
        const { list } = yield* create(["a@x.io"])
        const appended = Option.getOrThrow(
          yield* repo.appendRows(tenant.companyId, list.id, rows(list.id, ["A@X.IO", "d@x.io", "D@x.io", "e@x.io"]), t1)
        )
        expect(appended.added).toBe(2)
        expect(appended.list).toMatchObject({ rowCount: 3, updatedAt: t1, createdAt: t0 })
        expect(Option.isNone(yield* repo.appendRows("cmp_other", list.id, rows(list.id, ["z@x.io"]), t1))).toBe(true)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, list.id)).rowCount).toBe(3)
      }))

    it.effect("bulk appends of 12,000 rows cross the insert chunks and stay exact", () =>
      Effect.gen(function*() {
        const { tenant, repo, rows, create } = yield* fixture
        const { list } = yield* create()
        const emails = Array.from({ length: 12_000 }, (_, i) => `p${i}@bulk.io`)
        const first = yield* repo.appendRows(tenant.companyId, list.id, rows(list.id, emails.slice(0, 6_000)), t1)
        expect(Option.getOrThrow(first).added).toBe(6_000)
        const second = yield* repo.appendRows(tenant.companyId, list.id, rows(list.id, emails), t1)
        expect(Option.getOrThrow(second)).toMatchObject({ added: 6_000, list: { rowCount: 12_000 } })
      }))

    it.effect("concurrent appends of overlapping rows keep each address once and the count exact", () =>
      Effect.gen(function*() {
        const { tenant, repo, rows, create } = yield* fixture
        const { list } = yield* create()
        // Four batches of 500 addresses, each overlapping the next by half: 1,250 distinct addresses.
        const batches = [0, 1, 2, 3].map((k) =>
          rows(list.id, Array.from({ length: 500 }, (_, i) => `c${k * 250 + i}@x.io`))
        )
        const added = yield* Effect.forEach(batches, (batch) => repo.appendRows(tenant.companyId, list.id, batch, t1), {
          concurrency: "unbounded"
        })
        expect(added.reduce((sum, result) => sum + Option.getOrThrow(result).added, 0)).toBe(1_250)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, list.id)).rowCount).toBe(1_250)
        expect((yield* repo.listRows(tenant.companyId, list.id, undefined, { offset: 0, limit: 1 })).total).toBe(1_250)
      }))

    it.effect("rowsAfter walks a whole list in id order", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const { list } = yield* create(Array.from({ length: 7 }, (_, i) => `w${i}@x.io`))
        const seen: Array<string> = []
        let after: string | null = null
        for (;;) {
          const batch: ReadonlyArray<ContactRowRecord> = yield* repo.rowsAfter(tenant.companyId, list.id, after, 3)
          if (batch.length === 0) break
          seen.push(...batch.map((row) => row.email))
          after = batch[batch.length - 1].id
        }
        expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `w${i}@x.io`))
        expect(yield* repo.rowsAfter("cmp_other", list.id, null, 10)).toEqual([])
      }))

    it.effect("search, removeRow and remove", () =>
      Effect.gen(function*() {
        const { tenant, repo, create } = yield* fixture
        const { list } = yield* create(["ann@acme.io", "bob@x.io", "cy@x.io"])
        const found = yield* repo.listRows(tenant.companyId, list.id, "ACME", { offset: 0, limit: 10 })
        expect(found).toMatchObject({ total: 1, rows: [{ email: "ann@acme.io" }] })
        const byName = yield* repo.listRows(tenant.companyId, list.id, "f bob", { offset: 0, limit: 10 })
        expect(byName.rows.map((row) => row.email)).toEqual(["bob@x.io"])
        const row = found.rows[0]
        expect(Option.isNone(yield* repo.removeRow("cmp_other", list.id, row.id, t1))).toBe(true)
        expect(Option.getOrThrow(yield* repo.removeRow(tenant.companyId, list.id, row.id, t1))).toEqual(row)
        expect(Option.getOrThrow(yield* repo.get(tenant.companyId, list.id))).toMatchObject({ rowCount: 2, updatedAt: t1 })
        expect(Option.isNone(yield* repo.remove("cmp_other", list.id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.remove(tenant.companyId, list.id)).id).toBe(list.id)
        expect((yield* repo.list(tenant.companyId, { offset: 0, limit: 10 })).total).toBe(0)
        expect(yield* repo.rowsAfter(tenant.companyId, list.id, null, 10)).toEqual([])
      }))
  })

  it.layer(backend.storage)(`Suppressions contract on ${backend.name}`, (it) => {
    it.effect("add keeps the first entry; checks ignore case; each company has its own list", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const suppressions = yield* Suppressions
        const first = yield* suppressions.add(tenant.companyId, "Bounced@Example.com", "hard_bounce")
        expect(first).toMatchObject({ companyId: tenant.companyId, email: "Bounced@Example.com", reason: "hard_bounce" })
        expect(yield* suppressions.add(tenant.companyId, "bounced@example.com", "unsubscribed")).toEqual(first)
        expect(yield* suppressions.isSuppressed(tenant.companyId, "BOUNCED@example.COM")).toBe(true)
        expect(yield* suppressions.isSuppressed(other.companyId, "bounced@example.com")).toBe(false)
        expect(yield* suppressions.isSuppressed(tenant.companyId, "fine@example.com")).toBe(false)
        expect(Option.isNone(yield* suppressions.remove(other.companyId, "bounced@example.com"))).toBe(true)
        expect(Option.getOrThrow(yield* suppressions.remove(tenant.companyId, "BOUNCED@EXAMPLE.COM"))).toEqual(first)
        expect(yield* suppressions.isSuppressed(tenant.companyId, "bounced@example.com")).toBe(false)
      }))

    it.effect("suppressedAmong checks 25,000 addresses at once", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const suppressions = yield* Suppressions
        yield* suppressions.add(tenant.companyId, "u7@big.io", "unsubscribed")
        yield* suppressions.add(tenant.companyId, "U24999@big.io", "manual")
        yield* suppressions.add(tenant.companyId, "elsewhere@big.io", "manual")
        const emails = Array.from({ length: 25_000 }, (_, i) => `U${i}@BIG.io`)
        expect([...(yield* suppressions.suppressedAmong(tenant.companyId, emails))].sort()).toEqual([
          "u24999@big.io",
          "u7@big.io"
        ])
        expect((yield* suppressions.suppressedAmong(tenant.companyId, [])).size).toBe(0)
      }))

    it.effect("list pages newest first and searches by address", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const suppressions = yield* Suppressions
        for (const email of ["a@one.io", "b@two.io", "c@one.io"]) yield* suppressions.add(tenant.companyId, email, "manual")
        const all = yield* suppressions.list(tenant.companyId, undefined, { offset: 0, limit: 10 })
        expect(all.total).toBe(3)
        expect(new Set(all.rows.map((entry) => entry.email))).toEqual(new Set(["a@one.io", "b@two.io", "c@one.io"]))
        const found = yield* suppressions.list(tenant.companyId, "ONE.io", { offset: 0, limit: 1 })
        expect(found.total).toBe(2)
        expect(found.rows).toHaveLength(1)
      }))
  })
}
