import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Authorized } from "../../auth/Policy.ts"
import { uploadedFile } from "../../http/Uploads.ts"
import { currentDate } from "../../platform/Time.ts"
import { contactColumns, type CsvContact, readCsvContacts } from "./Csv.ts"
import { type LeadContact, toUpsert } from "./Leads.ts"
import { LeadsConfig } from "./LeadsConfig.ts"
import { LeadsRepo } from "./LeadsRepo.ts"

/**
 * `POST /leads/import`: a CSV file streamed through the shared reader, a
 * batch of rows upserted per statement, so memory stays bounded whatever the
 * file's length. Each batch commits on its own: a failure midway keeps the
 * batches before it (an import can be run again: it upserts).
 */

/** Rows per upsert statement. */
const batchSize = 1_000

/** Header spellings of the lead's named columns, beyond those every contact import knows. */
const leadColumns: Record<string, string> = {
  ...contactColumns,
  title: "title",
  jobtitle: "title",
  position: "title",
  phone: "phone",
  phonenumber: "phone",
  mobile: "phone",
  website: "website",
  url: "website",
  linkedin: "linkedinUrl",
  linkedinurl: "linkedinUrl",
  linkedinprofile: "linkedinUrl",
  tags: "tags",
  tag: "tags"
}

const named = new Set(Object.values(leadColumns))

const contactOf = (row: CsvContact): LeadContact => {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(row)) if (!named.has(name)) fields[name] = value
  return {
    email: row.email,
    firstName: row.firstName,
    lastName: row.lastName,
    company: row.company,
    title: row.title,
    phone: row.phone,
    website: row.website,
    linkedinUrl: row.linkedinUrl,
    // Tags in one cell, separated by `;` or `,`; each at most 64 characters, at most 50.
    tags: (row.tags ?? "").split(/[;,]/).map((tag) => tag.trim().slice(0, 64)).filter((tag) => tag !== "").slice(0, 50),
    fields
  }
}

export const importCsv = Effect.fn("LeadImport.importCsv")(function*(request: HttpServerRequest.HttpServerRequest) {
  const { principal } = yield* Authorized("campaigns:write")
  const config = yield* LeadsConfig
  const repo = yield* LeadsRepo
  return yield* Effect.scoped(Effect.gen(function*() {
    const file = yield* uploadedFile(request, "file", config.importMaxBytes)
    let created = 0
    let updated = 0
    const report = yield* readCsvContacts(file.path, leadColumns, batchSize, (batch) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const counts = yield* repo.upsert(batch.map((row) => toUpsert(principal.companyId, contactOf(row))), "overwrite", now)
        created += counts.created
        updated += counts.updated
      }))
    return { created, updated, ...report }
  }))
})
