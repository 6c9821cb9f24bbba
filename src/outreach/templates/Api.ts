import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { NonBlankText, Text } from "../../platform/Schemas.ts"

/**
 * A template's body as a visual builder saves it: `html` (a string, optional
 * while the template is being designed) is the e-mail's HTML; every other
 * field (`css`, `components`, `styles`, `version`…) is kept as given. A
 * campaign's body (`BodyDocument` of `src/http/BodyVersions.ts`) requires `html`.
 */
export const BodyDocument = Schema.StructWithRest(
  Schema.Struct({ html: Schema.optional(Text(1_000_000)) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "TemplateBodyDocument" })

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

export class TemplatesApi extends HttpApiGroup.make("templates")
  .annotateMerge(OpenApi.annotations({
    description: "Campaign templates: reusable e-mail designs and the images uploaded as design references, served from public links.",
    override: { "x-displayName": "Campaign templates" }
  })).add(
  HttpApiEndpoint.post("create", "/marketing-campaign-templates", {
    payload: NewTemplate,
    success: Template.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a campaign template",
    does: `A reusable design: name, subject and bodyDocument ({html, …} as a visual builder saves it).`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.get("list", "/marketing-campaign-templates", {
    query: PageQuery,
    success: Page(Template),
    error: [Forbidden]
  }).pipe(described({
    summary: "List campaign templates",
    does: `The company's templates, newest first.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.get("get", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    success: Template,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a campaign template",
    does: `One template; another company's is 404.`,
    who: "campaigns:read"
  })),
  HttpApiEndpoint.patch("update", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    payload: TemplatePatch,
    success: Template,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a campaign template",
    does: `Changes the supplied fields; bodyDocument is replaced whole.`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.delete("delete", "/marketing-campaign-templates/:templateId", {
    params: templateId,
    success: Template,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Delete a campaign template",
    does: `Deletes the template and its uploaded images (their public URLs stop working).`,
    who: "campaigns:write"
  })),
  HttpApiEndpoint.post("upload", "/marketing-campaign-templates/:templateId/upload", {
    params: templateId,
    payload: ImageUpload,
    success: TemplateUpload.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Upload an image to a campaign template",
    does: `multipart/form-data with one part \`file\`: a PNG, JPEG, GIF or WebP image (the type is read from the bytes, not the name), at most UPLOAD_MAX_BYTES. Answers the upload with its dimensions and public URL, for the template's visual-builder chat and for e-mails. No file, another type or too large: 400; no key: 401; role or plan: 403; unknown or another company's template: 404.`,
    who: "campaigns:write"
  }))
).middleware(Authentication).prefix("/api/v0") {}
