import { Schema } from "effect"
import { described } from "../http/Describe.ts"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"

/** The spec's Converted document, plus `summary` when one was asked for and the document is long. */
export const ConvertedDocument = Schema.Struct({
  name: Schema.String,
  content: Schema.String,
  tokens: Schema.Int,
  type: Schema.String,
  summary: Schema.optional(Schema.String)
}).annotate({ identifier: "ConvertedDocument" })

/** The multipart form: parts named `files`, and the fields `companyId` and `generateSummary`. */
export const ConvertForm = Schema.Struct({
  files: Multipart.FilesSchema,
  companyId: Schema.optional(Schema.String),
  generateSummary: Schema.optional(Schema.Literals(["true", "false"]))
}).pipe(HttpApiSchema.asMultipart())

/**
 * The upload limits of `DOCUMENT_MAX_FILES`/`_TOTAL_BYTES` for the multipart
 * parser, from the configuration at run time, and its limit failures as 400.
 * Runs after authentication: nothing is read from an unauthenticated body.
 */
export class UploadLimits extends HttpApiMiddleware.Service<UploadLimits>()("documents/UploadLimits", {
  error: BadRequest
}) {}

export class DocumentsApi extends HttpApiGroup.make("documents").add(
  HttpApiEndpoint.post("convert", "/documents/convert", {
    payload: ConvertForm,
    success: Schema.Struct({ documents: Schema.Array(ConvertedDocument) }),
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Convert documents to Markdown",
    does: "Multipart form: one or more parts named `files`, optional fields `companyId` and `generateSummary` (`true`/`false`, default false). " +
        "Answers each file as Markdown-flavoured text with its token count and its type as sniffed from the bytes " +
        "(txt, md, csv, json, html, pdf, docx, xlsx, pptx), in the order sent; nothing is stored. " +
        "With generateSummary, long documents also get a model-written summary, billed under the documents feature. " +
                "400 names the file that is too large, unsupported, encrypted, corrupt, a zip bomb, too deeply nested or too slow to convert; " +
        "403 without credits for a summary.",
    who: "documents:convert"
  }))
).annotateMerge(OpenApi.annotations({
  description: "Documents: conversion of uploaded files (PDF, Word, Excel, PowerPoint, HTML, CSV, JSON, text) to Markdown for a knowledge base, with optional model-written summaries.",
  override: { "x-displayName": "Documents" }
})).middleware(Authentication).middleware(UploadLimits).prefix("/api/v0") {}
