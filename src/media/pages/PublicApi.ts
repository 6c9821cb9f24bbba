import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { described } from "../../http/Describe.ts"
import { BadRequest, NotFound, RateLimited } from "../../platform/Errors.ts"
import { Text } from "../../platform/Schemas.ts"

/**
 * The published landing pages and their forms: public, no API key. A page
 * that is not published (or not there) answers 404. Served outside `/api/v0`
 * and, like `/health`, outside the OpenAPI document (and so the MCP catalog):
 * they are for browsers, documented in docs/landing-pages.md.
 */

const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

/** The most fields a submission may carry, and the longest value. */
export const maxSubmissionFields = 50
export const maxSubmissionValueChars = 5_000

const fieldCount = Schema.makeFilter((fields: Readonly<Record<string, unknown>>) =>
  Object.keys(fields).length <= maxSubmissionFields || `must have at most ${maxSubmissionFields} fields`)

const FieldName = Text(100)
const FieldValue = Text(maxSubmissionValueChars)

/** An HTML form's fields (`application/x-www-form-urlencoded`). */
export const FormSubmission = Schema.Record(FieldName, FieldValue).check(fieldCount).pipe(HttpApiSchema.asFormUrlEncoded())

/** The same as JSON: flat values only. */
export const JsonSubmission = Schema.Record(
  FieldName,
  Schema.Union([FieldValue, Schema.Number, Schema.Boolean, Schema.Null])
).check(fieldCount)

const params = { companySlug: Text(100), slug: Text(100) }

const publicNote = "Public: no API key. A page that is not published → 404."

export class PublicPagesApi extends HttpApiGroup.make("publicPages")
  .annotateMerge(OpenApi.annotations({
    description: "Published landing pages and their form submissions: public, no API key.",
    override: { "x-displayName": "Landing pages (public)" }
  })).add(
  HttpApiEndpoint.get("view", "/p/:companySlug/:slug", { params, success: Html, error: [NotFound] }).pipe(described({
    summary: "A published landing page",
    does:
      `The page's HTML, sanitised (no scripts, event handlers or javascript: URLs), with a strict Content-Security-Policy, an ETag (If-None-Match → 304) and a short public cache lifetime; the view is counted. ${publicNote}`,
    who: "public"
  })),
  HttpApiEndpoint.post("submit", "/p/:companySlug/:slug/submit", {
    params,
    payload: [FormSubmission, JsonSubmission],
    success: [Html, HttpApiSchema.Empty(303)],
    error: [BadRequest, NotFound, RateLimited]
  }).pipe(described({
    summary: "Submit a landing page's form",
    does:
      `A form post (form-encoded or JSON) with at least \`email\`: upserts the company's lead (firstName, lastName, company, title, phone, website, linkedinUrl fill its fields, other fields go to its custom fields) with a \`form_submitted\` activity and the \`landing_page.submitted\` event; then redirects (303) to the page's thankYouUrl or answers a thank-you page. A non-empty honeypot field \`_hp\` is answered the same but dropped. At most 30 submissions per minute per address and page (429). ${publicNote}`,
    who: "public",
    errors: { 400: "naming the field: no or an invalid email, too many or too long fields", 429: "too many submissions from this address" }
  }))
).annotate(OpenApi.Exclude, true) {}
