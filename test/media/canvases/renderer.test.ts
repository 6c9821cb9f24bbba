import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { imageSize } from "image-size"
import { type RenderRequest, render } from "../../../src/media/canvases/Renderer.ts"
import { RenderConfig, type RenderSettings } from "../../../src/media/canvases/RenderConfig.ts"
import { BrowserConfig, BrowserPool } from "../../../src/platform/BrowserPool.ts"
import { bundledFfmpeg, Ffmpeg } from "../../../src/platform/Ffmpeg.ts"
import { probe } from "../../support/Probe.ts"

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

/** Three white boxes on black moved by the clock: a CSS animation, requestAnimationFrame and setInterval, 10 px per 100 ms. */
const movingBoxes = `<style>body { margin: 0; background: #000 } div { position: absolute; left: 0; width: 20px; height: 20px; background: #fff }
  #css { top: 0; animation: move 1s linear infinite } #raf { top: 20px } #timer { top: 40px }
  @keyframes move { from { transform: translateX(0) } to { transform: translateX(100px) } }</style>
<div id=css></div><div id=raf></div><div id=timer></div>
<script>
  const raf = document.getElementById("raf"), timer = document.getElementById("timer")
  const tick = (t) => { raf.style.transform = "translateX(" + (t % 1000) / 10 + "px)"; requestAnimationFrame(tick) }
  requestAnimationFrame(tick)
  let x = 0
  setInterval(() => { x = (x + 10) % 100; timer.style.transform = "translateX(" + x + "px)" }, 100)
</script>`

/** The left edge of the white box crossing row `y` in each decoded grey frame. */
const edges = (frames: Uint8Array, width: number, height: number, y: number) =>
  Array.from({ length: frames.length / (width * height) }, (_, frame) => {
    const row = frames.subarray(frame * width * height + y * width, frame * width * height + (y + 1) * width)
    return row.findIndex((value) => value > 128)
  })

describe("Renderer virtual time", () => {
  it.layer(renderer(), { excludeTestServices: true })((it) => {
    it.effect("captures frame k at exactly k / fps seconds, for CSS animations, animation frames and timers alike", () =>
      Effect.gen(function*() {
        const video = yield* render(request(movingBoxes, { format: "gif", width: 140, height: 60, durationMs: 1000, fps: 10 }), noFiles)
        const frames = yield* Ffmpeg.make(bundledFfmpeg()).run({
          args: ["-i", "pipe:0", "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"],
          input: video.bytes,
          timeoutMs: 10_000,
          maxOutputBytes: 140 * 60 * 20
        })
        const expected = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]
        expect(edges(frames, 140, 60, 10)).toEqual(expected)
        expect(edges(frames, 140, 60, 30)).toEqual(expected)
        expect(edges(frames, 140, 60, 50)).toEqual(expected)
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
