import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { JsonObject, NonEmpty, Text } from "../../platform/Schemas.ts"
import { fieldNamePattern, LeadEmail } from "./Addresses.ts"
import { CsvUpload, ImportRowError } from "./Csv.ts"

export const LeadStatus = Schema.Literals([
  "new",
  "contacted",
  "replied",
  "interested",
  "not_interested",
  "unsubscribed",
  "bounced"
])
export type LeadStatus = typeof LeadStatus.Type

export const ActivityType = Schema.Literals([
  "sent",
  "opened",
  "clicked",
  "replied",
  "bounced",
  "unsubscribed",
  "status_changed",
  "form_submitted"
])
export type ActivityType = typeof ActivityType.Type

const maxFieldsBytes = 16 * 1024
const maxFieldsDepth = 4

const depthOf = (value: unknown): number =>
  typeof value !== "object" || value === null
    ? 0
    : 1 + Math.max(0, ...Object.values(value).map(depthOf))

/** Custom fields: a JSON object of at most 100 named fields, nested at most 4 levels, at most 16 KiB as JSON. */
export const LeadFields = JsonObject.check(
  Schema.isMaxProperties(100),
  Schema.makeFilter((fields: Record<string, unknown>) =>
    Object.keys(fields).filter((name) => !fieldNamePattern.test(name)).map((name) => ({
      path: [name],
      issue: "a field name must start with a letter and hold at most 64 letters, digits or underscores"
    }))
  ),
  Schema.makeFilter((fields: Record<string, unknown>) =>
    depthOf(fields) <= maxFieldsDepth || `must not nest deeper than ${maxFieldsDepth} levels`
  ),
  Schema.makeFilter((fields: Record<string, unknown>) =>
    JSON.stringify(fields).length <= maxFieldsBytes || `must be at most ${maxFieldsBytes} bytes as JSON`
  )
)

export const Tag = NonEmpty.check(Schema.isMaxLength(64))
export const Tags = Schema.Array(Tag).check(Schema.isMaxLength(50))

const value = Text(1_000)

/** The named fields of a lead besides its address. */
export const leadContactFields = {
  firstName: value,
  lastName: value,
  company: value,
  title: value,
  phone: Text(100),
  website: value,
  linkedinUrl: value
} as const
export type LeadContactField = keyof typeof leadContactFields

/** What a lead is, as the API shows it and the repository keeps it (`LeadRecord`). */
export const leadFields = {
  id: Schema.String,
  /** As first given (trimmed); unique in the company by its lower-case form. */
  email: Schema.String,
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  linkedinUrl: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  status: LeadStatus,
  fields: JsonObject
}

export const Lead = Schema.Struct({
  ...leadFields,
  created_date: Schema.String,
  updated_date: Schema.String
}).annotate({ identifier: "Lead" })

export const NewLead = Schema.Struct({
  email: LeadEmail,
  firstName: Schema.optional(leadContactFields.firstName),
  lastName: Schema.optional(leadContactFields.lastName),
  company: Schema.optional(leadContactFields.company),
  title: Schema.optional(leadContactFields.title),
  phone: Schema.optional(leadContactFields.phone),
  website: Schema.optional(leadContactFields.website),
  linkedinUrl: Schema.optional(leadContactFields.linkedinUrl),
  tags: Schema.optional(Tags),
  status: Schema.optional(LeadStatus),
  fields: Schema.optional(LeadFields),
  companyId: Schema.optional(Schema.String)
})

/** A change: given fields replace the stored ones; `null` clears an optional field. */
export const LeadPatch = Schema.Struct({
  email: Schema.optional(LeadEmail),
  firstName: Schema.optional(Schema.NullOr(leadContactFields.firstName)),
  lastName: Schema.optional(Schema.NullOr(leadContactFields.lastName)),
  company: Schema.optional(Schema.NullOr(leadContactFields.company)),
  title: Schema.optional(Schema.NullOr(leadContactFields.title)),
  phone: Schema.optional(Schema.NullOr(leadContactFields.phone)),
  website: Schema.optional(Schema.NullOr(leadContactFields.website)),
  linkedinUrl: Schema.optional(Schema.NullOr(leadContactFields.linkedinUrl)),
  tags: Schema.optional(Tags),
  status: Schema.optional(LeadStatus),
  fields: Schema.optional(LeadFields),
  companyId: Schema.optional(Schema.String)
})

export const LeadsQuery = {
  ...PageQuery,
  /** Case-insensitive substring of the e-mail, names or company. */
  search: Schema.optional(Text(320)),
  status: Schema.optional(LeadStatus),
  tag: Schema.optional(Tag)
}

export const Activity = Schema.Struct({
  id: Schema.String,
  type: ActivityType,
  at: Schema.String,
  campaignId: Schema.optionalKey(Schema.String),
  sequenceId: Schema.optionalKey(Schema.String),
  threadId: Schema.optionalKey(Schema.String),
  pageId: Schema.optionalKey(Schema.String),
  detail: JsonObject
}).annotate({ identifier: "LeadActivity" })

export const LeadImportResult = Schema.Struct({
  /** Leads made by this import. */
  created: Schema.Int,
  /** Leads that existed (same address, ignoring case) and were updated with the file's values. */
  updated: Schema.Int,
  /** Rows refused; the first 100 are listed in `errors` with their CSV line. */
  invalid: Schema.Int,
  errors: Schema.Array(ImportRowError)
}).annotate({ identifier: "LeadImportResult" })

const leadId = { leadId: Schema.String }

export class LeadsApi extends HttpApiGroup.make("leads")
  .annotateMerge(OpenApi.annotations({
    description: "Leads: one record per person of the company (unique by e-mail), with tags, custom fields, a status and the timeline of what happened to them.",
    override: { "x-displayName": "Leads" }
  })).add(
  HttpApiEndpoint.post("create", "/leads", {
    payload: NewLead,
    success: Lead.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a lead",
    does: "Creates a lead. The address is unique in the company ignoring case: a second lead with it answers 400 naming the existing one (import upserts instead).",
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("list", "/leads", { query: LeadsQuery, success: Page(Lead), error: [BadRequest, Forbidden] })
    .pipe(described({
      summary: "List leads",
      does: "The company's leads, newest first; `search` keeps those whose e-mail, names or company contain it (ignoring case), `status` and `tag` filter exactly.",
      who: "campaigns:read"
    })),
  HttpApiEndpoint.post("import", "/leads/import", {
    payload: CsvUpload,
    success: LeadImportResult.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Import leads from a CSV file",
    does: "multipart/form-data with one part `file`: a CSV file whose header row names the columns (email, first name, last name, company, title, phone, website, LinkedIn URL, tags separated by `;` or `,`; other columns become custom fields). Each row upserts the lead of its address: new leads are made, existing ones take the file's non-empty values. Invalid rows are counted and the first 100 reported with their line numbers. A file over IMPORT_MAX_BYTES, over 100,000 rows, without an email column, or not CSV answers 400.",
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("get", "/leads/:leadId", { params: leadId, success: Lead, error: [Forbidden, NotFound] })
    .pipe(described({ summary: "Get a lead", does: "One lead; another company's is 404.", who: "campaigns:read" })),
  HttpApiEndpoint.patch("update", "/leads/:leadId", {
    params: leadId,
    payload: LeadPatch,
    success: Lead,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a lead",
    does: "Changes the given fields (`null` clears one; `tags` and `fields` replace the stored ones). A new `status` writes a `status_changed` activity.",
    who: "campaigns:write"
  })),
  HttpApiEndpoint.delete("delete", "/leads/:leadId", { params: leadId, success: Lead, error: [Forbidden, NotFound] })
    .pipe(described({ summary: "Delete a lead", does: "Deletes the lead and its timeline; answers the deleted lead.", who: "campaigns:write" })),
  HttpApiEndpoint.get("activities", "/leads/:leadId/activities", {
    params: leadId,
    query: PageQuery,
    success: Page(Activity),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "A lead's timeline",
    does: "What happened to the lead, newest first: `sent`, `opened`, `clicked`, `replied`, `bounced`, `unsubscribed`, `status_changed`, `form_submitted`, each with the campaign, sequence, thread or page it concerns and a `detail` object.",
    who: "campaigns:read"
  }))
).middleware(Authentication).prefix("/api/v0") {}
