import validator from "validator"
import { newId } from "../platform/Ids.ts"
import type { ContactRowRecord } from "./ListsRepo.ts"

/**
 * Contacts as the API takes them: e-mail validation, the case-insensitive key
 * that deduplicates a list, and the split of a row into its named columns and
 * its further merge fields.
 */

/** A deliverable-looking address: a real validator (RFC 5321 lengths, a dotted domain), no display names. */
export const isValidEmail = (value: string): boolean =>
  validator.isEmail(value, { allow_display_name: false, require_tld: true, allow_ip_domain: false, allow_utf8_local_part: true })

/** The key an address is deduplicated and suppressed by: its lower-case form. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

/** A row as the API takes it (already validated): `email`, optional names and company, further merge fields. */
export type ContactInput = { readonly email: string } & { readonly [field: string]: string | undefined }

const named = new Set(["email", "firstName", "lastName", "company"])

const present = (value: string | undefined): string | null =>
  value === undefined || value.trim() === "" ? null : value

export const toRowRecord = (listId: string, input: ContactInput, now: Date): ContactRowRecord => {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(input)) {
    if (!named.has(name) && value !== undefined && value.trim() !== "") fields[name] = value
  }
  return {
    id: newId("row"),
    listId,
    email: input.email.trim(),
    firstName: present(input.firstName),
    lastName: present(input.lastName),
    company: present(input.company),
    fields,
    createdAt: now
  }
}

/** What a row search matches: e-mail, names and company, lower-cased (stored with the row). */
export const searchTextOf = (row: ContactRowRecord): string =>
  [row.email, row.firstName, row.lastName, row.company].filter((value) => value !== null).join(" | ").toLowerCase()

/** The rows with each address once (ignoring case), the first occurrence kept, in their order. */
export const uniqueByEmail = (rows: ReadonlyArray<ContactRowRecord>): ReadonlyArray<ContactRowRecord> => {
  const seen = new Set<string>()
  return rows.filter((row) => {
    const key = emailKey(row.email)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
