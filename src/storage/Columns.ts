import { Effect, Schema, SchemaGetter } from "effect"

/**
 * What the repositories' row schemas are made of: column codecs that read a
 * value the same way from PostgreSQL (`@effect/sql-pg`) and from PGlite, and
 * `fromColumns`, which maps a record's camelCase fields to its table's
 * snake_case columns. Both drivers answer `timestamptz` as a `Date` and
 * `jsonb` as the parsed value; they differ on `bigint` (a JS bigint on sql-pg,
 * a number on PGlite) and `numeric` (text on both).
 */

/** A `timestamptz` column. */
export const Timestamp = Schema.Date

/** A count or amount read from `bigint`, `numeric` or `integer` (a `count(*)` too), as a number. */
export const NumberColumn = Schema.Union([Schema.Number, Schema.BigInt, Schema.String]).pipe(
  Schema.decodeTo(Schema.Number, {
    decode: SchemaGetter.transform((value) => Number(value)),
    encode: SchemaGetter.transform((value) => value)
  })
)

/** `camelCase` → `snake_case`, at the type level. */
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S

/** The column of a record's field: its snake_case name (`companyId` → `company_id`). */
export const columnOf = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/**
 * The record's schema read from (and written as) a row: each field from the
 * column of its snake_case name (`companyId` ← `company_id`).
 */
export const fromColumns = <Fields extends Schema.Struct.Fields>(record: Schema.Struct<Fields>) =>
  record.pipe(Schema.encodeKeys(
    Object.fromEntries(Object.keys(record.fields).map((field) => [field, columnOf(field)])) as {
      readonly [K in keyof Fields]: SnakeCase<K & string>
    }
  ))

/**
 * A row schema's readers of a statement's rows: every row, the first if any,
 * or the one row. For statements built per call (an update whose SET depends
 * on the change) or whose few parameters need no request schema; a query
 * taking a record or a request schema goes through `SqlSchema`.
 */
export const readerOf = <T, RD>(Row: Schema.Decoder<T, RD>) => {
  const decodeAll = Schema.decodeUnknownEffect(Schema.Array(Row))
  const decodeOne = Schema.decodeUnknownEffect(Row)
  return {
    all: <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) => Effect.flatMap(statement, decodeAll),
    first: <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      Effect.flatMap(statement, (rows) => rows.length === 0 ? Effect.succeedNone : Effect.asSome(decodeOne(rows[0]))),
    one: <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      Effect.flatMap(statement, (rows) => decodeOne(rows[0]))
  }
}

/** The request of a lookup by id within a company. */
export const InCompany = Schema.Struct({ companyId: Schema.String, id: Schema.String })

/** A `jsonb` column holding an object. */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
