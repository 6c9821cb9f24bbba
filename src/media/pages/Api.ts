import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { CampaignChatRequest } from "../../work/design/Api.ts"
import { SseEvent } from "../../models/gateway/Sse.ts"
import { BodyDocument, versionSchemas } from "../../http/BodyVersions.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageNumber, PageQuery } from "../../platform/Pagination.ts"
import { Count, IsoDate, NonEmpty, Text } from "../../platform/Schemas.ts"

export const PageStatus = Schema.Literals(["draft", "published"])
export type PageStatus = typeof PageStatus.Type

/** The page's part of its public URL: lower-case letters, digits and inner dashes. */
export const Slug = Schema.String.check(
  Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, {
    message: "must be 1–64 lower-case letters, digits or dashes, not starting or ending with a dash"
  })
)

/** Where a visitor goes after submitting the page's form: a web address. */
export const ThankYouUrl = Text(2_000).check(
  Schema.makeFilter((url: string) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol) || "must be an http(s) URL")
)

export const LandingPage = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The creating user; null for a page made with a company API key of no user. */
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  slug: Schema.String,
  status: PageStatus,
  bodyDocument: BodyDocument,
  /** The number of the body's current version; 0 until a body is first saved. */
  bodyVersion: Schema.Int,
  thankYouUrl: Schema.NullOr(Schema.String),
  /** The public address while published (`PUBLIC_BASE_URL/p/{companySlug}/{slug}`); null otherwise. */
  url: Schema.NullOr(Schema.String),
  publishedAt: Schema.NullOr(IsoDate),
  created_date: IsoDate,
  updated_date: IsoDate
}).annotate({ identifier: "LandingPage" })

export const NewLandingPage = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: NonEmpty,
  slug: Slug,
  bodyDocument: Schema.optional(BodyDocument),
  /** `published` publishes it at once. */
  status: Schema.optional(PageStatus),
  thankYouUrl: Schema.optional(ThankYouUrl)
})

/** Every field optional: only those supplied change; `status` publishes or unpublishes. */
export const LandingPagePatch = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  name: Schema.optional(NonEmpty),
  slug: Schema.optional(Slug),
  bodyDocument: Schema.optional(BodyDocument),
  status: Schema.optional(PageStatus),
  thankYouUrl: Schema.optional(Schema.NullOr(ThankYouUrl))
})

/** One saved body version: without the body (list view), and with it. */
export const { Summary: LandingPageVersionSummary, Version: LandingPageVersion } = versionSchemas("LandingPageVersion", {
  owner: "pageId",
  body: "bodyDocument",
  Body: BodyDocument
})

export const PageDay = Schema.Struct({
  /** The UTC day, `YYYY-MM-DD`. */
  date: Schema.String,
  views: Count,
  uniqueVisitors: Count,
  submissions: Count
}).annotate({ identifier: "LandingPageDay" })

export const PageStats = Schema.Struct({
  views: Count,
  /** The sum of each day's distinct visitors (a visitor is not followed from one day to the next). */
  uniqueVisitors: Count,
  submissions: Count,
  /** submissions / uniqueVisitors (0 without visitors). */
  conversionRate: Schema.Number,
  /** Every day of the period, oldest first, zero days included. */
  perDay: Schema.Array(PageDay)
}).annotate({ identifier: "LandingPageStats" })

export const StatsQuery = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  /** How many days, up to today (UTC): 1–366, default 30. */
  days: Schema.optional(Schema.FiniteFromString.pipe(
    Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 366 })))
  ))
})

const pageId = { pageId: Schema.String }
const versionParams = { pageId: Schema.String, version: Schema.FiniteFromString.pipe(Schema.decodeTo(PageNumber)) }
/** An empty request body decodes as `null`, so the actions take no body as well as `{}`. */
const actionPayload = [Schema.Struct({ companyId: Schema.optional(Schema.String) }), Schema.Null]
const changeErrors = [BadRequest, Forbidden, NotFound]
const read = "landingPages:read"
const write = "landingPages:write"

/** `POST /landing-pages/{pageId}/<name>`, answering the page. */
const action = <const Name extends string>(name: Name, summary: string, does: string) =>
  HttpApiEndpoint.post(name, `/landing-pages/:pageId/${name}`, {
    params: pageId,
    payload: actionPayload,
    success: LandingPage,
    error: changeErrors
  }).pipe(described({ summary, does, who: write }))

export class LandingPagesApi extends HttpApiGroup.make("landingPages")
  .annotateMerge(OpenApi.annotations({
    description:
      "Landing pages: versioned HTML bodies edited by API or the design chat, published (sanitised, strict CSP) at /p/{companySlug}/{slug}, whose forms make leads; views, visitors and submissions per day.",
    override: { "x-displayName": "Landing pages" }
  })).add(
  HttpApiEndpoint.post("create", "/landing-pages", {
    payload: NewLandingPage,
    success: LandingPage.pipe(HttpApiSchema.status(201)),
    error: changeErrors
  }).pipe(described({
    summary: "Create a landing page",
    does: "Creates a landing page (a draft unless status is published); a bodyDocument given is saved as version 1. A slug another page of the company has → 400.",
    who: write
  })),
  HttpApiEndpoint.get("list", "/landing-pages", { query: PageQuery, success: Page(LandingPage), error: [BadRequest, Forbidden] })
    .pipe(described({ summary: "List landing pages", does: "The company's landing pages, newest first.", who: read })),
  HttpApiEndpoint.get("get", "/landing-pages/:pageId", { params: pageId, success: LandingPage, error: [Forbidden, NotFound] })
    .pipe(described({ summary: "Get a landing page", does: "One landing page; another company's → 404.", who: read })),
  HttpApiEndpoint.patch("update", "/landing-pages/:pageId", {
    params: pageId,
    payload: LandingPagePatch,
    success: LandingPage,
    error: changeErrors
  }).pipe(described({
    summary: "Change a landing page",
    does: "Changes the supplied fields; a bodyDocument makes a new version, served at once when the page is published.",
    who: write
  })),
  HttpApiEndpoint.delete("delete", "/landing-pages/:pageId", { params: pageId, success: LandingPage, error: changeErrors })
    .pipe(described({
      summary: "Delete a landing page",
      does: "Deletes the page with its versions and statistics; its public URL answers 404 from then on.",
      who: write
    })),
  action("publish", "Publish a landing page", "Serves the page's current body, sanitised, at its public URL (`url`)."),
  action("unpublish", "Unpublish a landing page", "Stops serving the page: its public URL answers 404 and `url` becomes null."),
  HttpApiEndpoint.get("listVersions", "/landing-pages/:pageId/versions", {
    params: pageId,
    query: PageQuery,
    success: Page(LandingPageVersionSummary),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "List body versions",
    does: "The page's saved body versions, newest first, without their bodies.",
    who: read
  })),
  HttpApiEndpoint.get("getVersion", "/landing-pages/:pageId/versions/:version", {
    params: versionParams,
    success: LandingPageVersion,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Get a body version",
    does: "One saved body version with its bodyDocument; unknown version → 404.",
    who: read
  })),
  HttpApiEndpoint.post("restoreVersion", "/landing-pages/:pageId/versions/:version/restore", {
    params: versionParams,
    payload: actionPayload,
    success: LandingPage,
    error: changeErrors
  }).pipe(described({
    summary: "Restore a body version",
    does: "Saves an earlier version's bodyDocument as a new version (served at once when published).",
    who: write
  })),
  HttpApiEndpoint.post("chat", "/landing-pages/:pageId/chat", {
    params: pageId,
    payload: CampaignChatRequest,
    success: HttpApiSchema.StreamSse({ events: SseEvent }),
    error: changeErrors
  }).pipe(described({
    summary: "Landing page design chat",
    does:
      "The design chat on a landing page: an AI designer edits the page's HTML through tools, starting from the bodyDocument sent; every edit is saved as a new body version. Answers `text/event-stream` with the campaign design chat's events (`text`, `tool_call`, `tool_result`, `files_changed`, then `done` or `error`). Billed in credits by tokens (feature campaigns). Errors come before the stream.",
    who: write,
    errors: {
      400: "missing message or bodyDocument.html, html over 1,000,000 characters",
      403: "naming the missing role or feature, or without credits",
      404: "for another company's page"
    }
  })),
  HttpApiEndpoint.get("stats", "/landing-pages/:pageId/stats", {
    params: pageId,
    query: StatsQuery,
    success: PageStats,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Landing page statistics",
    does:
      "Views, distinct visitors (by a salted daily hash of the address; no address is kept), form submissions and the conversion rate over the last `days` days (UTC), with one row per day.",
    who: read
  }))
).middleware(Authentication).prefix("/api/v0") {}
