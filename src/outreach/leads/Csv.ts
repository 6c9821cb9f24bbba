import { parse } from "csv-parse"
import { Effect, Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { createReadStream } from "node:fs"
import { fieldNamePattern, isValidEmail } from "./Addresses.ts"
import { InvalidCsv } from "./Errors.ts"

/**
 * Reading a CSV file of contacts with a real CSV parser (`csv-parse`,
 * streamed, so a large file never holds the event loop nor the memory): the
 * header row names the columns; every later row is checked on its own, and a
 * bad one is reported with its line number instead of failing the import.
 * Valid rows reach the caller a batch at a time. Lead and contact-list imports
 * both read through here, each with its own column names.
 */

/** Rows per import; a larger file is refused. */
export const maxImportRows = 100_000
/** Columns a file may map (the row limit of the JSON API). */
const maxColumns = 50
const maxCellLength = 1_000
/** Row errors reported by line; the rest are only counted. */
const maxReportedErrors = 100

export const ImportRowError = Schema.Struct({ line: Schema.Int, error: Schema.String })

export const CsvUpload = Schema.Struct({ file: Multipart.FilesSchema }).pipe(HttpApiSchema.asMultipart())

/** A row's values by field name (`email` always present and valid). */
export type CsvContact = { readonly email: string } & { readonly [field: string]: string }

export interface CsvReport {
  readonly invalid: number
  readonly errors: ReadonlyArray<{ readonly line: number; readonly error: string }>
}

/** Header spellings of the named columns every import knows, compared without case, spaces or punctuation. */
export const contactColumns: Record<string, string> = {
  email: "email",
  emailaddress: "email",
  mail: "email",
  firstname: "firstName",
  givenname: "firstName",
  first: "firstName",
  lastname: "lastName",
  surname: "lastName",
  familyname: "lastName",
  last: "lastName",
  company: "company",
  companyname: "company",
  organization: "company",
  organisation: "company"
}

/** `Job Title` → `jobTitle`: other headers become field names. */
const fieldName = (header: string) =>
  header.split(/[^A-Za-z0-9]+/).filter((word) => word.length > 0)
    .map((word, i) => (i === 0 ? word[0].toLowerCase() : word[0].toUpperCase()) + word.slice(1)).join("")

/** The field each column fills (undefined: a column with an empty header, ignored). */
const columnsOf = (header: ReadonlyArray<string>, named: Record<string, string>) =>
  Effect.gen(function*() {
    const columns = header.map((title) => {
      if (title.trim() === "") return undefined
      return named[title.toLowerCase().replace(/[^a-z0-9]/g, "")] ?? fieldName(title)
    })
    for (const [i, column] of columns.entries()) {
      if (column !== undefined && !fieldNamePattern.test(column)) {
        return yield* new InvalidCsv({ message: `CSV column ${i + 1} ("${header[i].slice(0, 64)}"): a header must start with a letter and name a field of at most 64 letters, digits or underscores`
        })
      }
      if (column !== undefined && columns.indexOf(column) !== i) {
        return yield* new InvalidCsv({ message: `CSV columns ${columns.indexOf(column) + 1} and ${i + 1} both name "${column}"` })
      }
    }
    if (!columns.includes("email")) {
      return yield* new InvalidCsv({ message: "The CSV header row has no email column (e.g. \"email\" or \"Email address\")" })
    }
    if (columns.filter((column) => column !== undefined).length > maxColumns) {
      return yield* new InvalidCsv({ message: `A CSV file may have at most ${maxColumns} columns` })
    }
    return columns
  })

/** The row's contact, or why it is refused. */
const contactOf = (columns: ReadonlyArray<string | undefined>, record: ReadonlyArray<string>): CsvContact | string => {
  const contact: Record<string, string> = {}
  for (const [i, column] of columns.entries()) {
    const value = record[i] ?? ""
    if (column === undefined || value === "") continue
    if (value.includes("\u0000")) return `column "${column}" contains a NUL character`
    if (value.length > maxCellLength) return `column "${column}" is longer than ${maxCellLength} characters`
    contact[column] = value
  }
  const email = contact.email ?? ""
  if (!isValidEmail(email)) return email === "" ? "no e-mail address" : `"${email.slice(0, 100)}" is not a valid e-mail address`
  return { ...contact, email }
}

const csvError = (cause: unknown) =>
  new InvalidCsv({ message: `The file is not valid CSV: ${cause instanceof Error ? cause.message : String(cause)}` })

/**
 * Reads the contacts of a CSV file, handing the valid ones to `onBatch` up to
 * `batchSize` at a time (the next rows are parsed only once a batch is taken);
 * a file that is not CSV or too large fails with 400. `named` maps header
 * spellings to field names; other headers become camelCased field names.
 */
export const readCsvContacts = <E, R>(
  path: string,
  named: Record<string, string>,
  batchSize: number,
  onBatch: (contacts: ReadonlyArray<CsvContact>) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const parser = yield* Effect.acquireRelease(
      Effect.sync(() =>
        createReadStream(path).pipe(parse({
          bom: true,
          info: true,
          relax_column_count: true,
          skip_empty_lines: true,
          trim: true,
          max_record_size: 64 * 1024
        }))
      ),
      (parser) => Effect.sync(() => parser.destroy())
    )
    const iterator: AsyncIterator<{ readonly record: ReadonlyArray<string>; readonly info: { readonly lines: number } }> =
      parser[Symbol.asyncIterator]()
    const next = Effect.tryPromise({ try: () => iterator.next(), catch: csvError })
    const first = yield* next
    if (first.done === true) return yield* new InvalidCsv({ message: "The CSV file is empty: it needs a header row" })
    const columns = yield* columnsOf(first.value.record, named)
    let batch: Array<CsvContact> = []
    const errors: Array<{ line: number; error: string }> = []
    let invalid = 0
    let rows = 0
    // csv-parse counts a CRLF inside a quoted cell as two lines: take the extra ones back off.
    let overcounted = 0
    for (let item = yield* next; item.done !== true; item = yield* next) {
      const { record, info } = item.value
      overcounted += record.reduce((count, cell) => count + cell.split("\r\n").length - 1, 0)
      const line = info.lines - overcounted
      if (record.every((cell) => cell === "")) continue
      if (rows++ >= maxImportRows) {
        return yield* new InvalidCsv({ message: `A CSV import may hold at most ${maxImportRows} rows` })
      }
      const contact = contactOf(columns, record)
      if (typeof contact === "string") {
        invalid++
        if (errors.length < maxReportedErrors) errors.push({ line, error: contact })
        continue
      }
      batch.push(contact)
      if (batch.length >= batchSize) {
        yield* onBatch(batch)
        batch = []
      }
    }
    if (batch.length > 0) yield* onBatch(batch)
    const report: CsvReport = { invalid, errors }
    return report
  }).pipe(Effect.scoped)
