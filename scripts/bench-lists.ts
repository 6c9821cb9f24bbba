// `npm run bench:lists` (under scripts/with-postgres.sh, or with BENCH_DATABASE_URL
// set, for PostgreSQL as well as PGlite): how fast contact-list rows go in and
// come out at 100,000 rows. Appends of 10,000 rows (one JSON parameter per
// 5,000 rows) are measured next to the same rows inserted one statement per
// row in one transaction — the baseline, in the same run on the same database.
// Then the page of rows and a search over the 100,000-row list (p50/p99), and
// one suppression check of 10,000 addresses. Settings: BENCH_LIST_ROWS
// (default 100000), BENCH_QUERIES (default 200).
import { Console, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { toRowRecord } from "../src/outreach/lists/Contacts.ts"
import { ListsRepo } from "../src/outreach/lists/ListsRepo.ts"
import { Suppressions } from "../src/outreach/lists/Suppressions.ts"
import { newId } from "../src/platform/Ids.ts"
import { runScript } from "./bench/children.ts"
import { postgresFromEnv, postgresNotSet, postgresStorage, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { latencySummary } from "./bench/stats.ts"

const totalRows = numberFromEnv("BENCH_LIST_ROWS", 100_000)
const queries = numberFromEnv("BENCH_QUERIES", 200)
const perCall = 10_000

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const result = yield* effect
    return { result, ms: performance.now() - started }
  })

/** p50 and p99 of `run` over `queries` calls, in milliseconds. */
const latencies = <E, R>(run: Effect.Effect<unknown, E, R>) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    for (let i = 0; i < queries; i++) times.push((yield* timed(run)).ms)
    const { p50Ms, p99Ms } = latencySummary(times)
    return `p50 ${p50Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms`
  })

const benchmark = (backend: string) =>
  Effect.gen(function*() {
    const { companyId, userId } = yield* Admin.bootstrap({ organization: "Bench", company: "Bench", email: `bench-${Date.now()}@example.com` })
    const repo = yield* ListsRepo
    const sql = yield* SqlClient.SqlClient
    const now = new Date()
    const newList = (name: string) =>
      repo.create({ id: newId("lst"), companyId, userId, name, rowCount: 0, createdAt: now, updatedAt: now }, [])
    const rowsFor = (listId: string, start: number, count: number) =>
      Array.from({ length: count }, (_, i) =>
        toRowRecord(listId, { email: `Person${start + i}@Example.com`, firstName: `First ${start + i}`, city: "Lyon" }, now))

    const { list } = yield* newList("bulk")
    let bulkMs = 0
    for (let start = 0; start < totalRows; start += perCall) {
      const call = yield* timed(repo.appendRows(companyId, list.id, rowsFor(list.id, start, perCall), now))
      bulkMs += call.ms
    }
    const baselineList = (yield* newList("baseline")).list
    const baselineRows = rowsFor(baselineList.id, 0, perCall)
    const baseline = yield* timed(sql.withTransaction(Effect.forEach(baselineRows, (row) =>
      sql`INSERT INTO contact_list_rows (id, list_id, email, email_key, first_name, last_name, company, fields, created_at)
        VALUES (${row.id}, ${row.listId}, ${row.email}, ${row.email.toLowerCase()}, ${row.firstName}, null, null,
          ${JSON.stringify(row.fields)}::jsonb, ${now}) ON CONFLICT (list_id, email_key) DO NOTHING`, { discard: true })))
    const bulkRate = totalRows / (bulkMs / 1000)
    const baselineRate = perCall / (baseline.ms / 1000)
    yield* Console.log(`\n${backend}: append ${totalRows} rows in calls of ${perCall}: ${Math.round(bulkRate)} rows/s ` +
      `(baseline, a statement per row in one transaction: ${Math.round(baselineRate)} rows/s; ${(bulkRate / baselineRate).toFixed(1)}×)`)
    const counted = Option.getOrThrow(yield* repo.get(companyId, list.id)).rowCount
    yield* Console.log(`${backend}: row count ${counted} (expected ${totalRows})`)
    yield* Console.log(`${backend}: first page of 25 rows: ${yield* latencies(repo.listRows(companyId, list.id, undefined, { offset: 0, limit: 25 }))}`)
    yield* Console.log(`${backend}: page 2000 of 25 rows: ${yield* latencies(repo.listRows(companyId, list.id, undefined, { offset: 49_975, limit: 25 }))}`)
    yield* Console.log(`${backend}: search "person4242" over ${totalRows} rows: ${yield* latencies(repo.listRows(companyId, list.id, "person4242", { offset: 0, limit: 25 }))}`)
    const walked = yield* timed(Effect.gen(function*() {
      let after: string | null = null
      let seen = 0
      for (;;) {
        const batch: ReadonlyArray<{ readonly id: string }> = yield* repo.rowsAfter(companyId, list.id, after, 1_000)
        if (batch.length === 0) return seen
        seen += batch.length
        after = batch[batch.length - 1].id
      }
    }))
    yield* Console.log(`${backend}: rowsAfter walk of the whole list in batches of 1,000: ${walked.result} rows in ${walked.ms.toFixed(0)} ms`)
    const suppressions = yield* Suppressions
    for (let i = 0; i < 1_000; i++) yield* suppressions.add(companyId, `person${i * 7}@example.com`, "unsubscribed")
    const check = yield* timed(suppressions.suppressedAmong(companyId, rowsFor(list.id, 0, perCall).map((row) => row.email)))
    yield* Console.log(`${backend}: suppressedAmong ${perCall} addresses: ${check.result.size} suppressed, ${check.ms.toFixed(0)} ms`)
  })

runScript(async () => {
  await Effect.runPromise(Effect.provide(benchmark("pglite"), inMemoryStorage))
  const postgres = postgresFromEnv()
  if (postgres === undefined) return console.log(`\n${postgresNotSet}`)
  const database = await throwawayDatabase(postgres.url)
  await Effect.runPromise(Effect.provide(benchmark("postgres"), postgresStorage(database.url)))
})
