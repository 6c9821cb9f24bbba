import { Schema } from "effect"
import { described } from "../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../platform/Errors.ts"
import { Page, PageQuery } from "../platform/Pagination.ts"
import { NonEmpty, Text } from "../platform/Schemas.ts"

/** A canvas: an HTML document of the company, with chat threads; `created`/`updated` are epoch milliseconds. */
export const Canvas = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The user who made it (a company API key acts as the user who created the key). */
  uid: Schema.NullOr(Schema.String),
  title: Schema.String,
  html: Schema.String,
  /** The canvas's newest chat thread; null before its first. */
  activeThreadId: Schema.NullOr(Schema.String),
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Canvas" })

/** The spec's Canvas chat thread. */
export const CanvasThread = Schema.Struct({
  id: Schema.String,
  canvasId: Schema.String,
  title: Schema.String,
  uid: Schema.NullOr(Schema.String),
  created: Schema.Number
}).annotate({ identifier: "CanvasThread" })

/** The largest canvas HTML kept (characters). */
export const maxCanvasHtml = 500_000

const Html = Text(maxCanvasHtml)

export const NewCanvas = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  title: NonEmpty,
  html: Schema.optional(Html)
})

/** Every field optional: only those supplied change. */
export const CanvasPatch = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  title: Schema.optional(NonEmpty),
  html: Schema.optional(Html)
})

export const NewThread = Schema.Struct({ companyId: Schema.optional(Schema.String), title: NonEmpty })

const canvasId = { canvas_id: Schema.String }

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

/** What to render: a still image or a looping video of the canvas (docs/canvases.md). */
export const RenderInput = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  format: Schema.Literals(["png", "jpeg", "webp", "mp4", "webm", "gif"]),
  /** CSS pixels; the output has `scale` device pixels per CSS pixel. */
  width: Schema.optional(between(16, 4096)),
  height: Schema.optional(between(16, 4096)),
  /** A video's length; the frames cover [0, durationMs) so the loop is seamless. */
  durationMs: Schema.optional(between(500, 30_000)),
  fps: Schema.optional(between(1, 60)),
  scale: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 1, maximum: 3 })))
})

/** A render: its bytes at `url`, a permanent public URL. `durationMs` and `fps` are null for a still. */
export const CanvasRender = Schema.Struct({
  id: Schema.String,
  canvasId: Schema.String,
  format: Schema.String,
  width: Schema.Number,
  height: Schema.Number,
  scale: Schema.Number,
  durationMs: Schema.NullOr(Schema.Number),
  fps: Schema.NullOr(Schema.Number),
  bytes: Schema.Number,
  url: Schema.String,
  created: Schema.Number
}).annotate({ identifier: "CanvasRender" })

const unknownCanvas = { 404: "for an unknown canvas or another company's" }

export class CanvasesApi extends HttpApiGroup.make("canvases").add(
  HttpApiEndpoint.post("create", "/content/canvases", {
    payload: NewCanvas,
    success: Canvas.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Create a canvas",
    does: "Creates an HTML canvas for the company (title required, html optional, empty by default).",
    who: "canvases:write"
  })),
  HttpApiEndpoint.get("list", "/content/canvases", { query: PageQuery, success: Page(Canvas), error: [Forbidden] })
    .pipe(described({
    summary: "List canvases",
    does: "The company's canvases, newest first, in the generic page envelope.",
    who: "canvases:read"
  })),
  HttpApiEndpoint.get("get", "/content/canvases/:canvas_id", {
    params: canvasId,
    success: Canvas,
    error: [Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Get a canvas",
    does: "One canvas with its HTML and active thread.",
    who: "canvases:read",
    errors: unknownCanvas
  })),
  HttpApiEndpoint.patch("update", "/content/canvases/:canvas_id", {
    params: canvasId,
    payload: CanvasPatch,
    success: Canvas,
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Change a canvas",
    does: "Changes the supplied fields (title, html); `updated` moves forward.",
    who: "canvases:write",
    errors: unknownCanvas
  })),
  HttpApiEndpoint.post("createThread", "/content/canvases/:canvas_id/threads", {
    params: canvasId,
    payload: NewThread,
    success: CanvasThread.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Create a canvas chat thread",
    does: "Starts a chat thread on the canvas; the new thread becomes the canvas's activeThreadId. A missing or empty title answers 400.",
    who: "canvases:write",
    errors: unknownCanvas
  })),
  HttpApiEndpoint.get("listThreads", "/content/canvases/:canvas_id/threads", {
    params: canvasId,
    query: PageQuery,
    success: Page(CanvasThread),
    error: [Forbidden, NotFound]
  })
    .pipe(described({
    summary: "List a canvas's chat threads",
    does: "The canvas's threads, newest first, in the generic page envelope.",
    who: "canvases:read",
    errors: unknownCanvas
  })),
  HttpApiEndpoint.post("render", "/content/canvases/:canvas_id/render", {
    params: canvasId,
    payload: RenderInput,
    success: CanvasRender.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound, RateLimited, InternalError]
  })
    .pipe(described({
    summary: "Render a canvas to an image or a looping video",
    does: "Renders the canvas's HTML in a headless Chromium: a still (png, jpeg, webp) or a seamlessly looping video (mp4, webm, gif) of `durationMs` at `fps`, captured on a virtual clock so animations are frame-exact. The page loads nothing but data: URIs and the platform's public files. The output is stored at a permanent public URL. Defaults: 1200×630, scale 1, 3000 ms, 30 fps.",
    who: "canvases:write",
    errors: {
      ...unknownCanvas,
      400: "for a bad field, too many pixels, an output past the byte cap, or a page whose scripts run too long or run out of memory (the message says which)",
      429: "when every browser is busy and the queue is full"
    }
  })),
  HttpApiEndpoint.get("listRenders", "/content/canvases/:canvas_id/renders", {
    params: canvasId,
    query: PageQuery,
    success: Page(CanvasRender),
    error: [Forbidden, NotFound]
  })
    .pipe(described({
    summary: "List a canvas's renders",
    does: "The canvas's renders, newest first, in the generic page envelope, each with its public URL.",
    who: "canvases:read",
    errors: unknownCanvas
  }))
).annotateMerge(OpenApi.annotations({
  description: "Canvases: HTML pages a team edits together, each with its chat threads; a new thread becomes the active one.",
  override: { "x-displayName": "Canvases" }
})).middleware(Authentication).prefix("/api/v0") {}
