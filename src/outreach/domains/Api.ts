import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { IsoDate, Text } from "../../platform/Schemas.ts"
import { DomainStatus, RecordStatus } from "./DomainsRepo.ts"

/** One DNS record to publish, with what the last check found at its name. */
export const DnsRecord = Schema.Struct({
  type: Schema.Literal("TXT"),
  /** The fully qualified name to publish it at. */
  name: Schema.String,
  value: Schema.String,
  purpose: Schema.Literals(["spf", "dkim", "dmarc", "mx", "tracking"]),
  /** `pending` until checked (or when the lookup failed), then `verified`, `missing` or `mismatch`. */
  status: RecordStatus,
  /** The relevant TXT strings found at `name` by the last check (a failed lookup's reason). */
  found: Schema.Array(Schema.String)
}).annotate({ identifier: "DnsRecord" })

export const Domain = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  domain: Schema.String,
  status: DomainStatus,
  dkimSelector: Schema.String,
  records: Schema.Array(DnsRecord),
  checkedAt: Schema.NullOr(IsoDate),
  verifiedAt: Schema.NullOr(IsoDate),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "Domain" })

export const NewDomain = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  /** A host name such as `example.com` or `mail.example.com`; internationalised names are stored in their xn-- form. */
  domain: Text(300)
}).annotate({ examples: [{ domain: "example.com" }] })

const CompanyBody = Schema.Struct({ companyId: Schema.optional(Schema.String) })
const domainId = { domainId: Schema.String }
const errors = [BadRequest, Forbidden, NotFound]

export class DomainsApi extends HttpApiGroup.make("domains")
  .annotateMerge(OpenApi.annotations({
    description: "Sending domains: a DKIM key per domain, the SPF, DKIM and DMARC records to publish, their verification in DNS, and DKIM signing of mail sent from a verified domain.",
    override: { "x-displayName": "Sending domains" }
  })).add(
  HttpApiEndpoint.post("create", "/domains", {
    payload: NewDomain,
    success: Domain.pipe(HttpApiSchema.status(201)),
    error: errors
  }).pipe(described({
    summary: "Add a sending domain",
    does: "Adds a domain to the company with a fresh 2048-bit DKIM key (its private key is encrypted at rest and never returned) and answers the DNS records to publish, all `pending`. An invalid domain name, or one the company has already → 400.",
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("list", "/domains", { query: PageQuery, success: Page(Domain), error: [BadRequest, Forbidden] })
    .pipe(described({
      summary: "List sending domains",
      does: "The company's sending domains, newest first, in the generic envelope.",
      who: "campaigns:read"
    })),
  HttpApiEndpoint.get("get", "/domains/:domainId", { params: domainId, success: Domain, error: errors })
    .pipe(described({
      summary: "Get a sending domain",
      does: "A sending domain with its records and the result of its last check.",
      who: "campaigns:read",
      errors: { 404: "for an unknown id or another company's domain" }
    })),
  HttpApiEndpoint.delete("delete", "/domains/:domainId", { params: domainId, success: Domain, error: errors })
    .pipe(described({
      summary: "Delete a sending domain",
      does: "Deletes the domain and its DKIM key; campaigns and sequences sending from it fail their next message with the reason.",
      who: "campaigns:write",
      errors: { 404: "for an unknown id or another company's domain" }
    })),
  HttpApiEndpoint.post("verify", "/domains/:domainId/verify", {
    params: domainId,
    payload: [CompanyBody, Schema.Null],
    success: Domain,
    error: errors
  }).pipe(described({
    summary: "Verify a sending domain",
    does: "Looks the records up in DNS (`DNS_SERVERS`, else the system resolver) and answers the domain with each record's status (`verified`, `missing`, `mismatch`, or `pending` when the lookup failed) and what was found. The domain is `verified` when every record is, `failed` when one is missing or wrong.",
    who: "campaigns:write",
    errors: { 404: "for an unknown id or another company's domain" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
