import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { NonEmpty } from "../../platform/Schemas.ts"

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

/** The knowledge base's Document; `created`/`updated` are epoch milliseconds. */
export const Document = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  title: Schema.String,
  type: Schema.String,
  tags: Schema.Array(Schema.String),
  projectId: Schema.NullOr(Schema.String),
  tokens: Schema.Int,
  chunkCount: Schema.Int,
  status: Schema.Literals(["indexing", "ready", "failed"]),
  /** Why indexing failed (status `failed`); null otherwise. */
  failure: Schema.NullOr(Schema.String),
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Document" })

const Tag = NonEmpty.check(Schema.isMaxLength(100))

/** Markdown or plain text: PostgreSQL text holds no NUL character. */
const DocumentText = Schema.String.check(
  Schema.makeFilter((text: string) => text.trim().length > 0 || "must not be empty"),
  Schema.makeFilter((text: string) => !text.includes("\u0000") || "must not contain NUL characters")
)

export const NewDocument = Schema.Struct({
  title: NonEmpty,
  content: DocumentText,
  tags: Schema.optional(Schema.Array(Tag).check(Schema.isMaxLength(50))),
  projectId: Schema.optional(Schema.String),
  companyId: Schema.optional(Schema.String)
}).annotate({
  identifier: "NewDocument",
  examples: [{ title: "Refund policy", content: "# Refunds\n\nCustomers may return goods within 30 days.", tags: ["policies"] }]
})

/** The multipart upload: parts named `files`, and the fields `title` (one file only), `tags` (comma list), `projectId`, `companyId`. */
export const UploadForm = Schema.Struct({
  files: Multipart.FilesSchema,
  title: Schema.optional(NonEmpty),
  tags: Schema.optional(Schema.String.check(Schema.isMaxLength(5_000))),
  projectId: Schema.optional(Schema.String),
  companyId: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.asMultipart())

export const DocumentQuery = {
  ...PageQuery,
  search: Schema.optional(Schema.String.check(Schema.isMaxLength(500))),
  tag: Schema.optional(Schema.String.check(Schema.isMaxLength(100))),
  projectId: Schema.optional(Schema.String)
}

export const SearchMode = Schema.Literals(["hybrid", "keyword", "semantic"])

export const SearchRequest = Schema.Struct({
  query: Schema.String.check(
    Schema.makeFilter((query: string) => query.trim().length > 0 || "must not be empty"),
    Schema.isMaxLength(2_000)
  ),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 }))),
  mode: Schema.optional(SearchMode),
  tag: Schema.optional(Schema.String.check(Schema.isMaxLength(100))),
  projectId: Schema.optional(Schema.String),
  documentIds: Schema.optional(Schema.Array(Schema.String).check(Schema.isMaxLength(100))),
  companyId: Schema.optional(Schema.String)
}).annotate({ identifier: "SearchRequest", examples: [{ query: "how long do refunds take", limit: 5, mode: "hybrid" }] })

export const SearchResult = Schema.Struct({
  documentId: Schema.String,
  title: Schema.String,
  chunkId: Schema.String,
  content: Schema.String,
  score: Schema.Number,
  highlights: Schema.Array(Schema.String)
}).annotate({ identifier: "SearchResult" })

/**
 * Multipart limits of `POST /documents` uploads (those of `/documents/convert`),
 * applied to multipart requests only: a JSON document keeps the service's
 * ordinary body limit (`MAX_BODY_BYTES`).
 */
export class KnowledgeUploadLimits extends HttpApiMiddleware.Service<KnowledgeUploadLimits>()("documents/KnowledgeUploadLimits", {
  error: BadRequest
}) {}

const documentId = { documentId: Schema.String }

export class KnowledgeApi extends HttpApiGroup.make("knowledge").add(
  HttpApiEndpoint.post("create", "/documents", {
    payload: [NewDocument, UploadForm],
    success: Schema.Struct({ documents: Schema.Array(Document) }).pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Add documents to the knowledge base",
    does: "JSON `{title, content, tags?, projectId?}` (Markdown or text), or a multipart form with parts `files` (converted as `/documents/convert` does), `title` (one file only; else each file's name), `tags` (comma list) and `projectId`. " +
      "Stores the Markdown, splits it into chunks by headings (~500 tokens, overlapping) and indexes them for keyword search at once; " +
      "with an embeddings model the document is `indexing` until its chunks are embedded in the background (billed under `documents`), then `ready` (or `failed` with the reason).",
    who: "documents:write",
    errors: { 400: "naming the invalid field or file", 404: "for another company's or an unknown projectId" }
  })),
  HttpApiEndpoint.get("list", "/documents", { query: DocumentQuery, success: Page(Document), error: [BadRequest, Forbidden] }).pipe(described({
    summary: "List documents",
    does: "The company's documents, newest first, paginated; filters `search` (part of the title), `tag`, `projectId`.",
    who: "documents:read"
  })),
  HttpApiEndpoint.get("get", "/documents/:documentId", { params: documentId, success: Document, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Get a document",
    does: "One document with its indexing status.",
    who: "documents:read",
    errors: { 404: "for an unknown id or another company's document" }
  })),
  HttpApiEndpoint.get("getContent", "/documents/:documentId/content", {
    params: documentId,
    success: Schema.Struct({ content: Schema.String }),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a document's Markdown",
    does: "The stored Markdown of a document.",
    who: "documents:read",
    errors: { 404: "for an unknown id or another company's document" }
  })),
  HttpApiEndpoint.delete("delete", "/documents/:documentId", { params: documentId, success: Document, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Delete a document",
    does: "Deletes a document with its chunks and embeddings at once, and answers it.",
    who: "documents:write",
    errors: { 404: "for an unknown id or another company's document" }
  })),
  HttpApiEndpoint.post("search", "/documents/search", {
    payload: SearchRequest,
    success: Schema.Struct({ results: Schema.Array(SearchResult) }),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Search the knowledge base",
    does: "Best chunks first for `query` (1–2000 characters): `keyword` is PostgreSQL full-text search (`websearch_to_tsquery` syntax: quotes, `or`, `-word`), `semantic` the nearest chunks by embedding (pgvector HNSW), `hybrid` (default) both fused by reciprocal rank. " +
      "Without an embeddings model `hybrid` is keyword search and `semantic` answers 400. `limit` 1–50 (default 10); filters `tag`, `projectId` (that project's documents and those of no project), `documentIds`. Each result has `highlights` (`ts_headline` fragments, matches in `**`). " +
      "Embedding the query is billed under `documents`.",
    who: "documents:read",
    errors: { 404: "for another company's or an unknown projectId" }
  }))
).annotateMerge(OpenApi.annotations({
  description: "The knowledge base: documents kept as Markdown, chunked and searched by keyword (PostgreSQL full-text search), by meaning (pgvector) or both.",
  override: { "x-displayName": "Knowledge base" }
})).middleware(Authentication).middleware(KnowledgeUploadLimits).prefix("/api/v0") {}
