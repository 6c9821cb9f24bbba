import { Schema } from "effect"

/** Schemas shared by several areas. */

const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/

/** A required, non-blank single-line string of reasonable size: names, titles, ids. No control characters. */
export const NonEmpty = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0 || "must not be empty"),
  Schema.makeFilter((s: string) => !controlCharacter.test(s) || "must not contain control characters"),
  Schema.isMaxLength(500)
)

export const Email = Schema.String.check(
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { description: "an email address", message: "must be an email address" }),
  Schema.isMaxLength(320)
)

/** A non-negative integer count or amount. */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A count kept in a PostgreSQL `integer` column (seats, company limit). */
export const Int32Count = Count.check(Schema.isLessThanOrEqualTo(2_147_483_647))

/** An instant, as an ISO 8601 string on the wire. */
export const IsoDate = Schema.Date

/** Years 1 to 9999: what both PostgreSQL timestamps and plain ISO 8601 strings hold. */
export const isStorableInstant = (date: Date): boolean => {
  const year = date.getUTCFullYear()
  return year >= 1 && year <= 9999
}

/** An instant the client sends, checked to be in the future where it is used. */
export const FutureDate = Schema.Date.check(
  Schema.makeFilter((date: Date) => isStorableInstant(date) || "must be between the years 1 and 9999")
)

export const OrganizationRole = Schema.Literals(["owner", "admin", "member"])

export const CompanyRole = Schema.Literals(["owner", "admin", "member", "viewer"])

/** A string of at most `max` characters (may be empty). */
export const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

/** A JSON object (not an array, not null) of free-form fields. */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** A required, non-blank string of at most `max` characters. */
export const NonBlankText = (max: number) =>
  Schema.String.check(
    Schema.makeFilter((s: string) => s.trim().length > 0 || "must not be empty"),
    Schema.isMaxLength(max)
  )
