import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { NonBlankText, Text } from "../../platform/Schemas.ts"
import { fieldNamePattern, LeadEmail } from "../leads/Addresses.ts"
import { CsvUpload, ImportRowError } from "../leads/Csv.ts"

/** At most this many rows per create or append call (a CSV import has its own limit). */
export const maxRowsPerCall = 10_000

const mergeFieldNames = Schema.makeFilter((row: object) =>
  Object.keys(row).filter((name) => !fieldNamePattern.test(name)).map((name) => ({
    path: [name],
    issue: "a field name must start with a letter and hold at most 64 letters, digits or underscores"
  }))
)

const fieldValue = Text(1_000)

/** A contact: `email`, optional names and company, and any further string fields as merge fields. */
export const NewContactRow = Schema.StructWithRest(
  Schema.Struct({
    email: LeadEmail,
    firstName: Schema.optional(fieldValue),
    lastName: Schema.optional(fieldValue),
    company: Schema.optional(fieldValue)
  }),
  [Schema.Record(Schema.String, fieldValue)]
).check(mergeFieldNames, Schema.isMaxProperties(50)).annotate({ identifier: "NewContactRow" })

export const NewContactRows = Schema.Array(NewContactRow).check(Schema.isMaxLength(maxRowsPerCall))

export const ContactList = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  rowCount: Schema.Int,
  created_date: Schema.String,
  updated_date: Schema.String
}).annotate({ identifier: "ContactList" })

export const ContactRow = Schema.Struct({
  id: Schema.String,
  listId: Schema.String,
  email: Schema.String,
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  /** The further merge fields of the row. */
  fields: Schema.Record(Schema.String, Schema.String),
  created_date: Schema.String
}).annotate({ identifier: "ContactRow" })

export const NewList = Schema.Struct({
  name: NonBlankText(200),
  rows: Schema.optional(NewContactRows),
  companyId: Schema.optional(Schema.String)
})

export const AppendRows = Schema.Struct({ rows: NewContactRows, companyId: Schema.optional(Schema.String) })

export const AppendResult = Schema.Struct({
  list: ContactList,
  /** Rows stored by this call. */
  added: Schema.Int,
  /** Rows left out because their address (ignoring case) was already in the list or earlier in the call. */
  duplicates: Schema.Int
}).annotate({ identifier: "AppendResult" })

export const ImportResult = Schema.Struct({
  ...AppendResult.fields,
  /** Rows refused (bad e-mail, bad field); the first 100 are listed in `errors` with their CSV line. */
  invalid: Schema.Int,
  errors: Schema.Array(ImportRowError)
}).annotate({ identifier: "ImportResult" })

export const RowsQuery = {
  ...PageQuery,
  /** Case-insensitive substring of the e-mail, names or company. */
  search: Schema.optional(Text(320))
}

export const SuppressionReason = Schema.Literals(["unsubscribed", "hard_bounce", "manual"])

export const Suppression = Schema.Struct({
  email: Schema.String,
  reason: SuppressionReason,
  created_date: Schema.String
}).annotate({ identifier: "Suppression" })

export const NewSuppression = Schema.Struct({ email: LeadEmail, companyId: Schema.optional(Schema.String) })

const listId = { listId: Schema.String }

export class ListsApi extends HttpApiGroup.make("lists")
  .annotateMerge(OpenApi.annotations({
    description: "Contact lists: the people campaigns and sequences write to, with CSV import and merge fields, and the company-wide suppression list every send honours.",
    override: { "x-displayName": "Contact lists" }
  })).add(
  HttpApiEndpoint.post("create", "/lists", {
    payload: NewList,
    success: ContactList.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a contact list",
    does: `Creates a list, optionally with up to ${maxRowsPerCall} rows. A row is {email, firstName?, lastName?, company?, …}; further string fields are kept as merge fields. An invalid e-mail answers 400 naming the row, and nothing is stored. Addresses are kept as given and deduplicated ignoring case.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("list", "/lists", { query: PageQuery, success: Page(ContactList), error: [Forbidden] })
    .pipe(described({
    summary: "List contact lists",
    does: `The company's contact lists, newest first.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.get("get", "/lists/:listId", { params: listId, success: ContactList, error: [Forbidden, NotFound] })
    .pipe(described({
    summary: "Get a contact list",
    does: `One list with its row count; another company's list is 404.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.delete("delete", "/lists/:listId", {
    params: listId,
    success: ContactList,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a contact list",
    does: `Deletes the list and its rows; answers the deleted list.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.post("appendRows", "/lists/:listId/rows", {
    params: listId,
    payload: AppendRows,
    success: AppendResult.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Append rows to a contact list",
    does: `Appends up to ${maxRowsPerCall} rows (the request body must also fit MAX_BODY_BYTES). Rows whose address is already in the list, ignoring case, are left out and counted as duplicates. An invalid e-mail answers 400 naming the row, and nothing is stored.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("listRows", "/lists/:listId/rows", {
    params: listId,
    query: RowsQuery,
    success: Page(ContactRow),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "List the rows of a contact list",
    does: `Rows in the order they were added, paged; \`search\` keeps rows whose e-mail, names or company contain it, ignoring case.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.delete("deleteRow", "/lists/:listId/rows/:rowId", {
    params: { ...listId, rowId: Schema.String },
    success: ContactRow,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a row of a contact list",
    does: `Deletes one row and answers it.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.post("import", "/lists/:listId/import", {
    params: listId,
    payload: CsvUpload,
    success: ImportResult.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Import a CSV file into a contact list",
    does: `multipart/form-data with one part \`file\`: a CSV file whose header row names the columns (email, first name, last name, company; other columns become merge fields). Valid rows are appended like POST rows; invalid ones are counted and the first 100 reported with their line numbers. A file over IMPORT_MAX_BYTES, over 100,000 rows, without an email column, or not CSV answers 400.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("listSuppressions", "/suppressions", {
    query: { ...PageQuery, search: Schema.optional(Text(320)) },
    success: Page(Suppression),
    error: [Forbidden]
  }).pipe(described({
    summary: "List suppressed addresses",
    does: `The company's suppression list, newest first: addresses no campaign or sequence mails (unsubscribed, hard bounced, added by hand). \`search\` filters by a substring of the address.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.post("addSuppression", "/suppressions", {
    payload: NewSuppression,
    success: Suppression.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Suppress an address",
    does: `Adds an address to the suppression list by hand (reason \`manual\`); an address already there keeps its entry.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.delete("deleteSuppression", "/suppressions/:email", {
    params: { email: Schema.String },
    success: Suppression,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Remove an address from the suppression list",
    does: `Lets campaigns mail the address again (matched ignoring case); 404 when it is not suppressed.`,
    who: "campaigns:write"
  }))
).middleware(Authentication).prefix("/api/v0") {}
