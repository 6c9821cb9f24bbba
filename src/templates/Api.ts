import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { whoMay } from "../auth/Policy.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { Page, PageQuery } from "../platform/Pagination.ts"
import { NonBlankText, Text } from "../platform/Schemas.ts"

/**
 * An e-mail body as a visual builder saves it: `html` (a string) is the
 * e-mail's HTML; every other field (`css`, `components`, `styles`, `version`…)
 * is kept as given. Shared by templates and campaigns.
 */
export const BodyDocument = Schema.StructWithRest(
  Schema.Struct({ html: Schema.optional(Text(1_000_000)) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "BodyDocument" })

export const Template = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  subject: Schema.String,
  bodyDocument: BodyDocument,
  /** 1 when created; one more with every save of the body document. */
  bodyVersion: Schema.Int,
  created_date: Schema.String,
  updated_date: Schema.String
}).annotate({ identifier: "CampaignTemplate" })

const editable = {
  subject: Schema.optional(Text(998)),
  bodyDocument: Schema.optional(BodyDocument),
  companyId: Schema.optional(Schema.String)
}

export const NewTemplate = Schema.Struct({ name: NonBlankText(200), ...editable })

/** Every field optional: only those supplied change. */
export const TemplatePatch = Schema.Struct({ name: Schema.optional(NonBlankText(200)), ...editable })

export const TemplateUpload = Schema.Struct({
  id: Schema.String,
  templateId: Schema.String,
  name: Schema.String,
  contentType: Schema.String,
  size: Schema.Int,
  width: Schema.Int,
  height: Schema.Int,
  /** Public, without an API key. */
  url: Schema.String
}).annotate({ identifier: "TemplateUpload" })

export const ImageUpload = Schema.Struct({ file: Multipart.FilesSchema }).pipe(HttpApiSchema.asMultipart())

const templateId = { templateId: Schema.String }
const readers = whoMay("campaigns:read")
const writers = whoMay("campaigns:write")

export class TemplatesApi extends HttpApiGroup.make("templates")
  .annotateMerge(OpenApi.annotations({
    description: "Campaign templates: reusable e-mail designs and the images uploaded as design references, served from public links.",
    override: { "x-displayName": "Campaign templates" }
  })).add(
  HttpApiEndpoint.post("create", "/marketing-campaign-templates", {
    payload: NewTemplate,
    success: Template.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).annotate(OpenApi.Summary, "Create a campaign template")
    .annotate(
      OpenApi.Description,
      `A reusable design: name, subject and bodyDocument ({html, …} as a visual builder saves it). ${writers}`
    ),
  HttpApiEndpoint.get("list", "/marketing-campaign-templates", {
    query: PageQuery,
    success: Page(Template),
    error: [Forbidden]
  }).annotate(OpenApi.Summary, "List campaign templates")
    .annotate(OpenApi.Description, `The company's templates, newest first. ${readers}`),
  HttpApiEndpoint.get("get", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    success: Template,
    error: [Forbidden, NotFound]
  }).annotate(OpenApi.Summary, "Get a campaign template")
    .annotate(OpenApi.Description, `One template; another company's is 404. ${readers}`),
  HttpApiEndpoint.patch("update", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    payload: TemplatePatch,
    success: Template,
    error: [BadRequest, Forbidden, NotFound]
  }).annotate(OpenApi.Summary, "Change a campaign template")
    .annotate(OpenApi.Description, `Changes the supplied fields; bodyDocument is replaced whole. ${writers}`),
  HttpApiEndpoint.delete("delete", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    success: Template,
    error: [Forbidden, NotFound]
  }).annotate(OpenApi.Summary, "Delete a campaign template")
    .annotate(OpenApi.Description, `Deletes the template and its uploaded images (their public URLs stop working). ${writers}`),
  HttpApiEndpoint.post("upload", "/marketing-campaign-templates/:templateId/upload", {
    params: templateId,
    payload: ImageUpload,
    success: TemplateUpload.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).annotate(OpenApi.Summary, "Upload an image to a campaign template")
    .annotate(
      OpenApi.Description,
      `multipart/form-data with one part \`file\`: a PNG, JPEG, GIF or WebP image (the type is read from the bytes, not the name), at most UPLOAD_MAX_BYTES. Answers the upload with its dimensions and public URL, for the template's visual-builder chat and for e-mails. No file, another type or too large: 400; no key: 401; role or plan: 403; unknown or another company's template: 404. ${writers}`
    )
).middleware(Authentication).prefix("/api/v0") {}
