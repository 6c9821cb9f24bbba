import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../../platform/Errors.ts"
import { SseEvent } from "../../models/gateway/Sse.ts"
import { Page, PageNumber, PageQuery } from "../../platform/Pagination.ts"
import { NonBlankText, NonEmpty, Text } from "../../platform/Schemas.ts"
import { VersionSource } from "../../storage/BodyVersions.ts"

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
  /** The newest version of `html`: 1 when created, one more with every change (PATCH, restore, a chat edit). */
  htmlVersion: Schema.Number,
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
const threadPath = { canvas_id: Schema.String, thread_id: Schema.String }
const versionPath = { canvas_id: Schema.String, version: Schema.FiniteFromString.pipe(Schema.decodeTo(PageNumber)) }

/** A version of a canvas's HTML; `source` says what made it. */
export const CanvasVersionSummary = Schema.Struct({
  version: Schema.Number,
  source: VersionSource,
  created: Schema.Number
}).annotate({ identifier: "CanvasVersionSummary" })

export const CanvasVersion = Schema.Struct({ ...CanvasVersionSummary.fields, html: Schema.String })
  .annotate({ identifier: "CanvasVersion" })

/** A message to the canvas chat; the thread keeps the conversation. */
export const CanvasChatRequest = Schema.Struct({
  companyId: Schema.optional(Schema.String),
  message: NonBlankText(20_000)
}).annotate({ identifier: "CanvasChatRequest", examples: [{ message: "Make the headline say Spring sale" }] })

/** A turn of a canvas chat thread. */
export const CanvasMessage = Schema.Struct({
  id: Schema.String,
  threadId: Schema.String,
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.String,
  created: Schema.Number
}).annotate({ identifier: "CanvasMessage" })

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
  HttpApiEndpoint.post("chat", "/content/canvases/:canvas_id/threads/:thread_id/messages", {
    params: threadPath,
    payload: CanvasChatRequest,
    success: HttpApiSchema.StreamSse({ events: SseEvent }),
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Canvas chat: ask the AI designer to edit the canvas",
    does:
      "Sends a message to the canvas's chat thread; an AI designer edits the canvas HTML through tools (read, replace, set text or attributes, insert, remove), starting from the stored HTML, with the thread's earlier turns and the company's brand kit. Every edit is saved as the canvas's next version. Answers `text/event-stream`: `text` {delta}, `tool_call` {id, name, arguments}, `tool_result` {id, name, result} or {id, name, error}, `files_changed` {version, html} after each saved edit, and last exactly one of `done` {version, usage} or `error` {error}. Billed in credits by tokens (feature content). A client that disconnects stops the agent; saved edits stay. Errors come before the stream.",
    who: "canvases:write",
    errors: {
      400: "a missing or blank message, unknown fields",
      403: "naming the missing role or feature, or without credits",
      404: "an unknown or another company's canvas, or a thread not of that canvas"
    }
  })),
  HttpApiEndpoint.get("listMessages", "/content/canvases/:canvas_id/threads/:thread_id/messages", {
    params: threadPath,
    query: PageQuery,
    success: Page(CanvasMessage),
    error: [Forbidden, NotFound]
  })
    .pipe(described({
    summary: "List a canvas chat thread's messages",
    does: "The thread's turns (the user's messages and the designer's answers), newest first, in the generic page envelope.",
    who: "canvases:read",
    errors: { 404: "an unknown or another company's canvas, or a thread not of that canvas" }
  })),
  HttpApiEndpoint.get("listVersions", "/content/canvases/:canvas_id/versions", {
    params: canvasId,
    query: PageQuery,
    success: Page(CanvasVersionSummary),
    error: [Forbidden, NotFound]
  })
    .pipe(described({
    summary: "List a canvas's versions",
    does: "The versions of the canvas's HTML without it, newest first: one per create, PATCH of html, restore and chat edit.",
    who: "canvases:read",
    errors: unknownCanvas
  })),
  HttpApiEndpoint.get("getVersion", "/content/canvases/:canvas_id/versions/:version", {
    params: versionPath,
    success: CanvasVersion,
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Get a canvas version",
    does: "One version of the canvas's HTML.",
    who: "canvases:read",
    errors: { 404: "an unknown version, or an unknown or another company's canvas" }
  })),
  HttpApiEndpoint.post("restoreVersion", "/content/canvases/:canvas_id/versions/:version/restore", {
    params: versionPath,
    success: Canvas,
    error: [BadRequest, Forbidden, NotFound]
  })
    .pipe(described({
    summary: "Restore a canvas version",
    does: "Saves that version's HTML as the canvas's newest version (source `restore`) and answers the canvas.",
    who: "canvases:write",
    errors: { 404: "an unknown version, or an unknown or another company's canvas" }
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
  description: "Canvases: HTML pages a team edits together, each with its chat threads (an AI designer edits the HTML; a new thread becomes the active one), numbered versions and renders to images and looping video.",
  override: { "x-displayName": "Canvases" }
})).middleware(Authentication).prefix("/api/v0") {}
