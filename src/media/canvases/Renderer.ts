import { Duration, Effect, Exit, Stream } from "effect"
import type { BrowserContext, CDPSession, Page } from "playwright-core"
import { BrowserPool } from "../../platform/BrowserPool.ts"
import { Ffmpeg, type FfmpegFailed } from "../../platform/Ffmpeg.ts"
import { CanvasRenderBusy, CanvasRenderFailed, CanvasRenderRefused } from "./Errors.ts"
import { frameClockScript } from "./FrameClock.ts"
import { RenderConfig } from "./RenderConfig.ts"

/**
 * Renders HTML to a still image or a looping video in the browser pool's
 * Chromium, sandboxed (DESIGN §7.6): the page loads nothing but `data:` URIs
 * and the platform's own public files, answered from the store without a
 * network; every other request is aborted. Time is virtual (`FrameClock.ts`):
 * a still is the frame at 0 ms, a video the frames at 0, 1/fps, … up to its
 * duration, so the last frame leads seamlessly into the first. Frames go to
 * ffmpeg as PNG images. Decisions in docs/canvases.md.
 */

export const stillFormats = ["png", "jpeg", "webp"] as const
export const videoFormats = ["mp4", "webm", "gif"] as const
export type RenderFormat = typeof stillFormats[number] | typeof videoFormats[number]

export interface RenderRequest {
  readonly html: string
  readonly format: RenderFormat
  readonly width: number
  readonly height: number
  readonly scale: number
  readonly durationMs: number
  readonly fps: number
}

export interface Rendered {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly extension: string
  readonly frames: number
}

/** Where the page may load files from: the public files' URL prefix, and how to read one by URL. */
export interface PublicFiles {
  readonly prefix: string
  readonly read: (url: string) => Promise<{ readonly contentType: string; readonly bytes: Uint8Array } | undefined>
}

/** The page's own address: answered by the renderer, never resolved (`.invalid` is reserved). */
const pageUrl = "http://canvas.render.invalid/"

const contentTypes: Record<RenderFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  mp4: "video/mp4",
  webm: "video/webm",
  gif: "image/gif"
}

/** ffmpeg's output arguments per video format; MP4 and WebM go to a file so their index and duration are written. */
const encoders: Record<typeof videoFormats[number], { readonly args: ReadonlyArray<string>; readonly file?: string }> = {
  // H.264 wants even dimensions: an odd one gets one transparent-black pixel more.
  mp4: {
    args: ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-movflags", "+faststart"],
    file: "mp4"
  },
  webm: {
    args: ["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "33", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-pix_fmt", "yuv420p"],
    file: "webm"
  },
  // One palette for the whole loop, made from every frame, and a loop forever.
  gif: {
    args: ["-filter_complex", "[0:v]split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=5", "-loop", "0", "-f", "gif", "pipe:1"]
  }
}

/**
 * Keeps the page on its document: a navigation the page starts (a link, a form, `location.href`, a refresh)
 * is cancelled before it begins, so a canvas that navigates renders as itself rather than as an error page.
 */
const stayOnPageScript = `navigation.addEventListener("navigate", (event) => { if (event.cancelable) event.preventDefault() })`

const isVideo = (format: RenderFormat): format is typeof videoFormats[number] => (videoFormats as ReadonlyArray<string>).includes(format)

/** Every request of the page: its own document, public files from the store, and nothing else. */
const sandbox = async (context: BrowserContext, html: string, files: PublicFiles) => {
  // WebSockets are not routed: they go to the browser's dead proxy address and fail there.
  await context.route("**/*", async (route) => {
    const url = route.request().url()
    if (url === pageUrl) return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html })
    if (url.startsWith(files.prefix)) {
      const file = await files.read(url).catch(() => undefined)
      return file === undefined
        ? route.fulfill({ status: 404, body: "" })
        : route.fulfill({ status: 200, contentType: file.contentType, body: Buffer.from(file.bytes) })
    }
    return route.abort("blockedbyclient")
  })
}

export const render = (request: RenderRequest, files: PublicFiles) =>
  Effect.gen(function*() {
    const settings = yield* RenderConfig
    const pool = yield* BrowserPool
    const ffmpeg = yield* Ffmpeg
    const video = isVideo(request.format)
    const pixels = Math.round(request.width * request.height * request.scale * request.scale)
    const maxPixels = video ? settings.maxVideoPixels : settings.maxPixels
    if (pixels > maxPixels) {
      return yield* new CanvasRenderRefused({
        message: `${request.width}×${request.height} at scale ${request.scale} is ${pixels} pixels; a ${video ? "video frame" : "still"} may have at most ${maxPixels}`
      })
    }
    const frames = video ? Math.max(1, Math.round(request.durationMs * request.fps / 1000)) : 1
    const scriptLimit = <A, E>(effect: Effect.Effect<A, E>, what: string) =>
      Effect.timeoutOrElse(effect, {
        duration: Duration.millis(settings.scriptTimeoutMs),
        orElse: () =>
          Effect.fail(new CanvasRenderRefused({
            message: `The canvas's scripts ran longer than ${settings.scriptTimeoutMs} ms ${what} (an endless loop?); the render was stopped`
          }))
      })

    const inPage = (page: Page, context: BrowserContext) =>
      Effect.gen(function*() {
        page.on("dialog", (dialog) => void dialog.dismiss().catch(() => undefined))
        const crashed = Effect.callback<never, CanvasRenderRefused>((resume) => {
          const listener = () =>
            resume(Effect.fail(new CanvasRenderRefused({
              message: "The canvas's page ran out of memory or crashed; the render was stopped"
            })))
          page.once("crash", listener)
          return Effect.sync(() => void page.off("crash", listener))
        })
        const guarded = <A, E>(effect: Effect.Effect<A, E>) => Effect.raceFirst(effect, crashed)
        // Independent set-up steps go to the browser at once: each awaited round trip costs a render time
        // (on a loaded machine, a scheduling delay of the browser's processes and this one).
        const [cdp] = yield* Effect.promise(() =>
          Promise.all([context.newCDPSession(page), sandbox(context, request.html, files), context.addInitScript(`${frameClockScript};\n${stayOnPageScript}`)])
        )
        // A page stuck in a script is stopped before its context closes. After a render that succeeded the
        // page was just answering, so the stop is sent without waiting for its reply.
        const terminate = () => cdp.send("Runtime.terminateExecution").catch(() => undefined)
        yield* Effect.addFinalizer((exit) =>
          Exit.isSuccess(exit)
            ? Effect.sync(() => void terminate())
            : Effect.promise(terminate).pipe(Effect.timeout("1 second"), Effect.ignore)
        )
        yield* guarded(scriptLimit(
          Effect.tryPromise({
            try: async () => {
              await page.goto(pageUrl, { waitUntil: "load", timeout: 0 })
            },
            catch: (error) => new CanvasRenderRefused({ message: `The canvas could not be loaded: ${String(error).split("\n")[0]}` })
          }),
          "while loading"
        ))
        const capture = (index: number, format: "png" | "jpeg" | "webp") =>
          guarded(scriptLimit(
            Effect.tryPromise({
              try: () => frameAt(page, cdp, index * 1000 / request.fps, format, request.scale, video),
              catch: (error) => new CanvasRenderRefused({ message: `Frame ${index} could not be captured: ${String(error).split("\n")[0]}` })
            }),
            `at frame ${index}`
          ))
        if (!video) return yield* capture(0, request.format as "png" | "jpeg" | "webp")
        const encoder = encoders[request.format as typeof videoFormats[number]]
        return yield* ffmpeg.run({
          args: ["-f", "image2pipe", "-c:v", "png", "-framerate", String(request.fps), "-i", "pipe:0", ...encoder.args],
          input: Stream.range(0, frames - 1).pipe(Stream.mapEffect((index) => capture(index, "png"))),
          outputExtension: encoder.file,
          timeoutMs: settings.timeoutMs,
          maxOutputBytes: settings.maxBytes
        })
      }).pipe(
        Effect.scoped,
        // From the moment the render has its page: waiting in the queue does not count.
        Effect.timeoutOrElse({
          duration: Duration.millis(settings.timeoutMs),
          orElse: () => Effect.fail(new CanvasRenderRefused({ message: `The render took longer than ${settings.timeoutMs} ms and was stopped` }))
        })
      )

    const bytes = yield* pool.withPage(
      { viewport: { width: request.width, height: request.height }, serviceWorkers: "block" },
      inPage
    ).pipe(
      Effect.catchTags({
        BrowserFailed: (failed) =>
          Effect.fail(failed.reason === "busy" ? new CanvasRenderBusy({ message: failed.message }) : new CanvasRenderFailed({ message: failed.message })),
        FfmpegFailed: (failed: FfmpegFailed) =>
          Effect.fail(
            failed.reason === "output-too-large" || failed.reason === "timeout"
              ? new CanvasRenderRefused({ message: `The ${request.format} ${failed.reason === "timeout" ? "took too long to encode" : `is larger than ${settings.maxBytes} bytes`}` })
              : new CanvasRenderFailed({ message: `Encoding the ${request.format} failed: ${failed.message}` })
          )
      })
    )
    if (bytes.length > settings.maxBytes) {
      return yield* new CanvasRenderRefused({ message: `The ${request.format} is larger than ${settings.maxBytes} bytes` })
    }
    return { bytes, contentType: contentTypes[request.format], extension: request.format === "jpeg" ? "jpg" : request.format, frames } satisfies Rendered
  })

/** Moves the page's clock to `ms` and captures the viewport. */
const frameAt = async (page: Page, cdp: CDPSession, ms: number, format: "png" | "jpeg" | "webp", scale: number, fast: boolean) => {
  const viewport = page.viewportSize()!
  // The first frame waits for the page's fonts too, in the same call.
  await page.evaluate(
    async (time) => {
      const page = globalThis as unknown as { document: { fonts: { ready: Promise<unknown> } }; __frameClock: { advanceTo: (ms: number) => void } }
      if (time === 0) await page.document.fonts.ready
      page.__frameClock.advanceTo(time)
    },
    ms
  )
  const shot = await cdp.send("Page.captureScreenshot", {
    format,
    ...(format === "png" ? {} : { quality: 90 }),
    // Video frames are compressed quickly (ffmpeg re-encodes them); a still is compressed well.
    optimizeForSpeed: fast,
    // The clip's scale draws the page at that many device pixels per CSS pixel.
    clip: { x: 0, y: 0, width: viewport.width, height: viewport.height, scale }
  })
  return new Uint8Array(Buffer.from(shot.data, "base64"))
}
