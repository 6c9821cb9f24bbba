import { newId } from "../../platform/Ids.ts"
import { type ContactRowRecord, emailKey } from "./ListsRepo.ts"

/**
 * Contacts as the API takes them: the split of a row
 * into its named columns and its further merge fields. (`emailKey`, which the
 * stored rows are keyed by, is the repository's; senders find it here too.)
 */
export { emailKey }

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

/** A row's merge values: its further fields plus `email`, `firstName`, `lastName` and `company` when set. */
export const mergeValuesOf = (row: ContactRowRecord): Record<string, string> => {
  const values: Record<string, string> = { ...row.fields, email: row.email }
  if (row.firstName !== null) values.firstName = row.firstName
  if (row.lastName !== null) values.lastName = row.lastName
  if (row.company !== null) values.company = row.company
  return values
}
