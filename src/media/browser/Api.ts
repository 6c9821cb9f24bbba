import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../../platform/Errors.ts"
import { NonEmpty } from "../../platform/Schemas.ts"

const Selector = NonEmpty.check(Schema.isMaxLength(1_000))

/** One step on the page, an object with one key. */
export const BrowserAction = Schema.Union([
  Schema.Struct({ click: Selector }),
  Schema.Struct({ type: Schema.Struct({ selector: Selector, text: Schema.String.check(Schema.isMaxLength(10_000)) }) }),
  /** Milliseconds to wait (at most 10 s), or a selector to wait for. */
  Schema.Struct({ wait: Schema.Union([Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000 })), Selector]) }),
  /** Pixels to scroll down (negative: up). */
  Schema.Struct({ scroll: Schema.Int.check(Schema.isBetween({ minimum: -100_000, maximum: 100_000 })) })
])
export type BrowserAction = typeof BrowserAction.Type

export const ExtractInput = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  url: NonEmpty.check(Schema.isMaxLength(8_000)),
  /** A selector the page must show before it is read. */
  waitFor: Schema.optional(Selector),
  screenshot: Schema.optional(Schema.Boolean),
  actions: Schema.optional(Schema.Array(BrowserAction).check(Schema.isMaxLength(20)))
})

export const PageLink = Schema.Struct({ url: Schema.String, text: Schema.String })

export const ExtractedPage = Schema.Struct({
  url: Schema.String,
  /** Where the page ended up after redirects and actions. */
  finalUrl: Schema.String,
  title: Schema.String,
  markdown: Schema.String,
  links: Schema.Array(PageLink),
  screenshotUrl: Schema.optional(Schema.String)
}).annotate({ identifier: "ExtractedPage" })

export class BrowserApi extends HttpApiGroup.make("browser").add(
  HttpApiEndpoint.post("extract", "/browser/extract", {
    payload: ExtractInput,
    success: ExtractedPage,
    error: [BadRequest, Forbidden, NotFound, RateLimited, InternalError]
  }).pipe(described({
    summary: "Load a web page in a browser and read it",
    does: "Loads the URL in a headless Chromium, runs the actions (at most 20: click, type, wait, scroll) and answers the page's title, its content as Markdown, its links and optionally a screenshot at a public URL. Every request the page makes goes through the outbound guard: internal addresses are refused. Loading is bounded by BROWSER_TIMEOUT_MS and the page's bytes by BROWSER_MAX_BYTES.",
    who: "content:use",
    errors: {
      400: "for a bad field, a URL the outbound guard refuses, a page that does not load in time or loads too many bytes, or an action that fails (the message says which)",
      429: "when every browser is busy and the queue is full"
    }
  }))
).annotateMerge(OpenApi.annotations({
  description: "Browser automation: web pages loaded in a sandboxed headless Chromium, read as Markdown.",
  override: { "x-displayName": "Browser" }
})).middleware(Authentication).prefix("/api/v0") {}
