import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { imageSize } from "image-size"
import { type RenderRequest, render } from "../../src/canvases/Renderer.ts"
import { RenderConfig, type RenderSettings } from "../../src/canvases/RenderConfig.ts"
import { BrowserConfig, BrowserPool } from "../../src/platform/BrowserPool.ts"
import { bundledFfmpeg, Ffmpeg } from "../../src/platform/Ffmpeg.ts"
import { probe } from "../support/Probe.ts"

const noFiles = { prefix: "http://files.invalid/api/v0/public/files/", read: async () => undefined }

const renderer = (overrides: Partial<RenderSettings> = {}) =>
  Layer.mergeAll(
    BrowserPool.layer.pipe(Layer.provide(BrowserConfig.layerWith({ browsers: 1, pagesPerBrowser: 2 }))),
    Layer.succeed(Ffmpeg, Ffmpeg.make(bundledFfmpeg())),
    RenderConfig.layerWith(overrides)
  )

const request = (html: string, options: Partial<RenderRequest> = {}): RenderRequest => ({
  html, format: "png", width: 1200, height: 630, scale: 1, durationMs: 3000, fps: 30, ...options
})

/** A box whose grey level follows the clock: 0 at 0 ms to 250 at 1000 ms, by CSS animation and by requestAnimationFrame. */
const clockPage = `<!doctype html><style>
  body { margin: 0 } #css { width: 50px; height: 50px; animation: fade 1s linear infinite }
  @keyframes fade { from { background: rgb(0,0,0) } to { background: rgb(250,250,250) } }
</style><div id=css></div><div id=js style="width:50px;height:50px"></div>
<script>
  const tick = (t) => { const v = Math.round((t % 1000) / 4); document.getElementById('js').style.background = 'rgb(' + v + ',' + v + ',' + v + ')'; requestAnimationFrame(tick) }
  requestAnimationFrame(tick)
</script>`

describe("Renderer", () => {
  it.layer(renderer(), { excludeTestServices: true })((it) => {
    it.effect("renders stills in each format at the size and scale asked", () =>
      Effect.gen(function*() {
        const page = "<h1 style='font-family:sans-serif'>Launch day</h1>"
        const png = yield* render(request(page, { width: 1200, height: 630, scale: 2 }), noFiles)
        expect([...png.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        expect(imageSize(png.bytes)).toMatchObject({ type: "png", width: 2400, height: 1260 })
        const jpeg = yield* render(request(page, { format: "jpeg", width: 300, height: 200 }), noFiles)
        expect([...jpeg.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
        expect(imageSize(jpeg.bytes)).toMatchObject({ type: "jpg", width: 300, height: 200 })
        const webp = yield* render(request(page, { format: "webp", width: 64, height: 48 }), noFiles)
        expect(Buffer.from(webp.bytes.subarray(8, 12)).toString("latin1")).toBe("WEBP")
        expect(imageSize(webp.bytes)).toMatchObject({ type: "webp", width: 64, height: 48 })
      }))

    it.effect("renders looping videos whose length, size and frame count ffprobe reads back", () =>
      Effect.gen(function*() {
        for (const format of ["mp4", "webm", "gif"] as const) {
          const video = yield* render(request(clockPage, { format, width: 120, height: 90, durationMs: 1000, fps: 10 }), noFiles)
          const probed = yield* Effect.promise(() => probe(video.bytes))
          expect(probed, format).toMatchObject({ width: 120, height: 90, frames: 10 })
          expect(probed.durationSeconds, format).toBeCloseTo(1, 1)
        }
      }))
  })
})

describe("Renderer sandbox limits", () => {
  it.layer(renderer({ scriptTimeoutMs: 1_000 }), { excludeTestServices: true })((it) => {
    it.effect("stops a page whose script never returns", () =>
      Effect.gen(function*() {
        const started = Date.now()
        const failed = yield* Effect.flip(render(request("<script>while (true) {}</script>", { width: 32, height: 32 }), noFiles))
        expect(failed.message).toContain("ran longer than 1000 ms while loading")
        expect(Date.now() - started).toBeLessThan(8_000)
        const after = yield* render(request("<p>next</p>", { width: 32, height: 32 }), noFiles)
        expect(imageSize(after.bytes)).toMatchObject({ width: 32, height: 32 })
      }))
  })
})
