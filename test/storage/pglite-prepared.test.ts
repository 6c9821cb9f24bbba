import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Pglite from "../../src/storage/PgliteClient.ts"

/** The PGlite client runs statements as named prepared statements; these are the cases that could go stale. */
describe("PGlite prepared statements", () => {
  it.layer(Pglite.layerFrom(Pglite.open(undefined)), { timeout: 30_000 })("client", (it) => {
    it.effect("a statement prepared before its table changes returns the new columns", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe("CREATE TABLE widgets (id text PRIMARY KEY)")
        yield* sql.unsafe("INSERT INTO widgets VALUES ('a')")
        const select = (id: string) => sql`SELECT * FROM widgets WHERE id = ${id}`
        expect(yield* select("a")).toEqual([{ id: "a" }])
        yield* sql.unsafe("ALTER TABLE widgets ADD COLUMN size integer NOT NULL DEFAULT 3")
        expect(yield* select("a")).toEqual([{ id: "a", size: 3 }])
      }))

    it.effect("statements beyond the cache bound are closed and prepared again when reused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const distinct = Array.from({ length: 300 }, (_, i) => i)
        const first = yield* Effect.forEach(
          distinct,
          (i) => sql<{ readonly n: number }>`SELECT ${i}::int + ${0} AS n, ${i} AS tag_${sql.literal(String(i))}`
        )
        expect(first.map((rows) => rows[0]!.n)).toEqual(distinct)
        const again = yield* sql<{ readonly n: number }>`SELECT ${7}::int + ${0} AS n, ${7} AS tag_${sql.literal("0")}`
        expect(again[0]!.n).toBe(7)
        const failed = yield* Effect.flip(sql`SELECT * FROM no_such_table WHERE id = ${1}`)
        expect(failed.message).toContain("no_such_table")
        expect(yield* sql<{ readonly ok: boolean }>`SELECT ${true}::boolean AS ok`).toEqual([{ ok: true }])
      }))
  })
})
