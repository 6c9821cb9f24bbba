import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, NumberColumn, Timestamp } from "../../src/storage/Columns.ts"
import { backends } from "../support/TestServer.ts"

const Record = Schema.Struct({
  createdAt: Timestamp,
  rowCount: NumberColumn,
  price: NumberColumn,
  total: NumberColumn,
  settings: Schema.Record(Schema.String, Schema.Unknown),
  note: Schema.NullOr(Schema.String)
})

describe.each(backends)("row schemas on $name", ({ storage }) => {
  it.layer(storage)((it) => {
    it.effect("read timestamps, bigint, numeric, counts and jsonb into the record's fields", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const read = SqlSchema.findOne({
          Request: Schema.Date,
          Result: fromColumns(Record),
          execute: (at) =>
            sql`SELECT ${at}::timestamptz AS created_at, 9007199254740991::bigint AS row_count, 12.5::numeric AS price,
              count(*) AS total, '{"a":[1,{"b":null}]}'::jsonb AS settings, NULL::text AS note, 'ignored' AS other
              FROM (VALUES (1), (2)) AS two(n)`
        })
        const at = new Date("2024-02-29T12:34:56.789Z")
        expect(yield* read(at)).toEqual({
          createdAt: at,
          rowCount: 9007199254740991,
          price: 12.5,
          total: 2,
          settings: { a: [1, { b: null }] },
          note: null
        })
      }))

    it.effect("write a record as its columns", () =>
      Effect.sync(() => {
        const at = new Date(0)
        expect(Schema.encodeSync(fromColumns(Record))({ createdAt: at, rowCount: 1, price: 2, total: 3, settings: {}, note: "x" }))
          .toEqual({ created_at: at, row_count: 1, price: 2, total: 3, settings: {}, note: "x" })
      }))
  })
})
