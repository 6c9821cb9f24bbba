import { Effect } from "effect"
import { contactColumns, type CsvReport, maxImportRows, readCsvContacts } from "../leads/Csv.ts"
import type { ContactInput } from "./Contacts.ts"

/**
 * A contact list's CSV import reads the whole file (at most 100,000 rows) with
 * the leads' streamed reader, then appends its rows in one transaction:
 * all or none.
 */
export const readListCsv = (path: string) =>
  Effect.gen(function*() {
    const rows: Array<ContactInput> = []
    const report = yield* readCsvContacts(path, contactColumns, maxImportRows, (batch) =>
      Effect.sync(() => {
        rows.push(...batch)
      }))
    return { ...report, rows } satisfies CsvReport & { readonly rows: ReadonlyArray<ContactInput> }
  })
