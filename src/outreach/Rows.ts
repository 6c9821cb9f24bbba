import { Schema } from "effect"

/**
 * A record's row schema: the record's own Schema whose camelCase fields are
 * read from (and written to) the table's snake_case columns, so a record is
 * declared once and mapped in one place.
 */
export const fromColumns = <S extends Schema.Struct<Schema.Struct.Fields>>(record: S) =>
  record.pipe(Schema.encodeKeys(Object.fromEntries(
    Object.keys(record.fields).map((field) => [field, field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)])
  ) as { readonly [K in keyof S["fields"]]?: string }))

/** A count read from SQL, written `count(*)::int` (PostgreSQL answers a plain `count(*)` as a bigint). */
export const Count = Schema.Number
