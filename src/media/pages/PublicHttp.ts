import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AccessRevision } from "../../auth/AccessRevision.ts"
import { makeRevisionCache } from "../../auth/RevisionCache.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { PagesConfig } from "./PagesConfig.ts"
import type { PageAddress, PublishedRecord } from "./PagesRepo.ts"
import { PublicPagesApi } from "./PublicApi.ts"
import { contentSecurityPolicy } from "./Rendering.ts"
import * as Visitors from "./Visitors.ts"

const api = areaApi(PublicPagesApi)

/** The thank-you page of a form without a `thankYouUrl`. */
const thankYou = `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Thank you</title></head>
<body><h1>Thank you</h1><p>We received your details.</p></body></html>
`

/** Headers every public page answer carries: no script may run, nothing may frame it, no type sniffing. */
const guarded = (thankYouUrl: string | null) => ({
  "content-security-policy": contentSecurityPolicy(thankYouUrl),
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-frame-options": "DENY"
})

/** A published page's two answers, made once per page and process rather than per request. */
interface Served {
  readonly pageId: string
  readonly etag: string
  readonly bytes: number
  readonly ok: HttpServerResponse.HttpServerResponse
  readonly notModified: HttpServerResponse.HttpServerResponse
}

/** How many published pages, and how many of their bytes, a process keeps ready to serve. */
const servedCapacity = 10_000
const servedBytes = 64 * 1024 * 1024

/** Whether `If-None-Match` names `etag` (a list, weak forms and `*` included, as RFC 9110 compares for GET). */
const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag
  })

export const PublicPagesLive = HttpApiBuilder.group(api, "publicPages", (handlers) =>
  Effect.gen(function*() {
    const config = yield* PagesConfig
    /** The visitor's address: the connection's, or the first X-Forwarded-For entry behind a trusted proxy. */
    const visitorOf = (request: HttpServerRequest.HttpServerRequest): Visitors.Visitor => {
      const forwarded = config.trustForwardedFor ? request.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
      return {
        address: forwarded !== undefined && forwarded !== "" ? forwarded : Option.getOrElse(request.remoteAddress, () => "unknown"),
        userAgent: request.headers["user-agent"] ?? ""
      }
    }
    const cacheControl = `public, max-age=${config.cacheSeconds}, must-revalidate`
    const encoder = new TextEncoder()
    const serve = (page: PublishedRecord): Served => {
      const headers = { ...guarded(page.thankYouUrl), etag: page.servedEtag, "cache-control": cacheControl }
      const body = encoder.encode(page.servedHtml)
      return {
        pageId: page.id,
        etag: page.servedEtag,
        bytes: body.length,
        ok: HttpServerResponse.uint8Array(body, { contentType: "text/html; charset=utf-8", headers }),
        notModified: HttpServerResponse.empty({ status: 304, headers })
      }
    }
    /**
     * Published pages ready to serve, trusted at the access revision they were
     * read at (`RevisionCache`): every change of a page goes through
     * `AccessRevision.changing`, so this process's next request reads it anew,
     * and another's soon after (`AccessRevision.recent`).
     */
    const served = makeRevisionCache<Served>(servedCapacity, { weightOf: (page) => page.bytes, max: servedBytes })
    const revisions = yield* AccessRevision
    const pages = yield* Visitors.PublishedPages
    const servedAt = (address: PageAddress) =>
      Effect.flatMap(revisions.recent, (revision) =>
        served.at(revision, `${address.company}/${address.page}`, () => Effect.map(pages.find(address), serve)))
    return handlers
      .handle("view", ({ params, request }) =>
        answer(Effect.flatMap(servedAt({ company: params.companySlug, page: params.slug }), (answers) =>
          Effect.as(
            Visitors.countView(answers.pageId, visitorOf(request)),
            matches(request.headers["if-none-match"], answers.etag) ? answers.notModified : answers.ok
          ))))
      .handle("submit", ({ params, payload, request }) =>
        Effect.map(
          answer(Visitors.submit({ company: params.companySlug, page: params.slug }, payload, visitorOf(request))),
          (page) =>
            page.thankYouUrl === null
              ? HttpServerResponse.text(thankYou, {
                contentType: "text/html; charset=utf-8",
                headers: { ...guarded(null), "cache-control": "no-store" }
              })
              : HttpServerResponse.redirect(page.thankYouUrl, { status: 303, headers: { "cache-control": "no-store" } })
        ))
  }))
