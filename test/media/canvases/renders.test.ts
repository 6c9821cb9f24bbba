import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { HttpClient, HttpClientRequest } from "effect/http"
import { imageSize } from "image-size"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { BrowserPool } from "../../../src/platform/BrowserPool.ts"
import { bundledFfmpeg, Ffmpeg } from "../../../src/platform/Ffmpeg.ts"
import { expectErrorResponse, postJson, send } from "../../support/Http.ts"
import { probe } from "../../support/Probe.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

/** The bytes at a public URL, fetched from the test server by its path. */
const download = (url: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.get(new URL(url).pathname))
    return { status: response.status, type: response.headers["content-type"], bytes: new Uint8Array(yield* response.arrayBuffer) }
  }).pipe(Effect.orDie)

/** The RGB value of the pixel at (x, y) of an image or of a video's frame, decoded by ffmpeg. */
const pixelAt = (image: Uint8Array, x: number, y: number, frame = 0) =>
  Effect.map(
    Ffmpeg.make(bundledFfmpeg()).run({
      args: ["-i", "pipe:0", "-vf", `select=eq(n\\,${frame}),crop=1:1:${x}:${y}`, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
      input: image,
      timeoutMs: 10_000,
      maxOutputBytes: 3
    }),
    (bytes) => [...bytes]
  )

/** A server on loopback that counts every connection made to it: the page must make none. */
const observer = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly origin: string; readonly connections: () => number; readonly close: () => void }>((resolve) => {
      let connections = 0
      const server = createServer((_, response) => response.end("<h1>leaked</h1>"))
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () =>
        resolve({
          origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          connections: () => connections,
          close: () => server.close()
        }))
    })
  ),
  (server) => Effect.sync(server.close)
)

const settings = {
  browser: { browsers: 1, pagesPerBrowser: 2, pageMemoryMb: 64, queueMax: 200 },
  // The default 5 s for scripts: on a busy machine the leak test's page of refused requests took over 2 s.
  render: { scriptTimeoutMs: 5_000, timeoutMs: 30_000 }
}

describe.each(backends)("canvas renders on $name", ({ storage }) => {
  it.layer(testServer(storage, settings), { excludeTestServices: true })("", (it) => {
    it.effect("renders a PNG at a permanent public URL and lists it under its canvas", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({
          payload: { title: "Social card", html: "<body style='margin:0;background:rgb(255,0,0)'><h1>Launch</h1></body>" }
        })
        const params = { canvas_id: canvas.id }
        const rendered = yield* api.canvases.render({ params, payload: { format: "png", scale: 2, width: 600, height: 315 } })
        expect(rendered).toMatchObject({ canvasId: canvas.id, format: "png", width: 600, height: 315, scale: 2, durationMs: null, fps: null })
        expect(rendered.url).toMatch(/\/api\/v0\/public\/files\/fil_[0-9a-f]{32}\/Social-card-rnd_[0-9a-f]+\.png$/)
        const file = yield* download(rendered.url)
        expect(file).toMatchObject({ status: 200, type: "image/png" })
        expect(file.bytes.length).toBe(rendered.bytes)
        expect(imageSize(file.bytes)).toMatchObject({ type: "png", width: 1200, height: 630 })
        expect(yield* pixelAt(file.bytes, 1190, 620)).toEqual([255, 0, 0])
        const defaults = yield* api.canvases.render({ params, payload: { format: "jpeg" } })
        expect(defaults).toMatchObject({ width: 1200, height: 630, scale: 1 })
        expect(imageSize((yield* download(defaults.url)).bytes)).toMatchObject({ type: "jpg", width: 1200, height: 630 })
        const listed = yield* api.canvases.listRenders({ params, query: {} })
        expect(listed).toEqual({ items: [defaults, rendered], total: 2, pages: 1, hasNext: false })
        // Each render's webhook event was written with its record.
        const events = yield* SqlClient.SqlClient.use((sql) =>
          sql<{ readonly payload: { readonly renderId: string; readonly url: string } }>`SELECT payload FROM event_outbox
            WHERE company_id = ${tenant.companyId} AND type = 'render.completed' ORDER BY created_at`)
        expect(events.map((event) => [event.payload.renderId, event.payload.url]).sort()).toEqual(
          [[rendered.id, rendered.url], [defaults.id, defaults.url]].sort()
        )
      }))

    it.effect("renders a looping MP4 and GIF whose duration and frames ffprobe reads back", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({
          payload: {
            title: "Loop",
            html: "<style>div{width:40px;height:40px;background:#09f;animation:m 1s linear infinite}@keyframes m{to{transform:translateX(100px)}}</style><div></div>"
          }
        })
        for (const format of ["mp4", "gif"] as const) {
          const rendered = yield* api.canvases.render({
            params: { canvas_id: canvas.id },
            payload: { format, width: 160, height: 90, durationMs: 1500, fps: 12 }
          })
          expect(rendered).toMatchObject({ format, durationMs: 1500, fps: 12 })
          const file = yield* download(rendered.url)
          expect(file.type).toBe(format === "mp4" ? "video/mp4" : "image/gif")
          const probed = yield* Effect.promise(() => probe(file.bytes))
          expect(probed, format).toMatchObject({ width: 160, height: 90, frames: 18 })
          expect(probed.durationSeconds, format).toBeCloseTo(1.5, 1)
        }
      }))

    it.effect("the page reaches nothing outside: no connection arrives from images, styles, scripts, fetch, beacons, frames or sockets", () =>
      Effect.gen(function*() {
        const outside = yield* observer
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const o = outside.origin
        const html = `<link rel=stylesheet href="${o}/style.css"><script src="${o}/script.js"></script>
          <img src="${o}/pixel.png"><img src="http://localhost:${new URL(o).port}/other.png"><iframe src="${o}/frame"></iframe>
          <img src="file:///etc/hostname"><video src="${o}/video.mp4" autoplay></video>
          <script>
            fetch("${o}/fetch").catch(() => {}); navigator.sendBeacon("${o}/beacon", "x")
            try { new WebSocket("${o.replace("http", "ws")}/socket") } catch {}
            new EventSource("${o}/events"); import("${o}/module.js").catch(() => {})
            const xhr = new XMLHttpRequest(); xhr.open("GET", "${o}/xhr"); xhr.send()
            setTimeout(() => { location.href = "${o}/navigate" }, 10)
          </script><h1>Sandboxed</h1>`
        const canvas = yield* api.canvases.create({ payload: { title: "Leaky", html } })
        const still = yield* api.canvases.render({ params: { canvas_id: canvas.id }, payload: { format: "png", width: 200, height: 100 } })
        const loop = yield* api.canvases.render({
          params: { canvas_id: canvas.id },
          payload: { format: "gif", width: 64, height: 32, durationMs: 500, fps: 4 }
        })
        expect([still.format, loop.format]).toEqual(["png", "gif"])
        yield* Effect.sleep("300 millis")
        expect(outside.connections()).toBe(0)
      }))

    it.effect("a canvas that navigates (a script, a form, a link, a refresh) is rendered as itself, and nothing leaves", () =>
      Effect.gen(function*() {
        const outside = yield* observer
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const o = outside.origin
        const pages = [
          `<script>setTimeout(() => { location.href = "${o}/script" }, 10)</script>`,
          `<form action="${o}/form" method="post" target="_top"><input type="hidden" name="a"></form><script>setTimeout(() => document.forms[0].submit(), 300)</script>`,
          `<a id="out" href="about:blank" target="_top"></a><script>setTimeout(() => document.getElementById("out").click(), 600)</script>`,
          `<meta http-equiv="refresh" content="0;url=${o}/refresh">`
        ]
        for (const page of pages) {
          const canvas = yield* api.canvases.create({ payload: { title: "Wanderer", html: `<body style="margin:0;background:rgb(0,255,0)">${page}</body>` } })
          const rendered = yield* api.canvases.render({
            params: { canvas_id: canvas.id },
            payload: { format: "gif", width: 32, height: 32, durationMs: 1000, fps: 4 }
          })
          const gif = (yield* download(rendered.url)).bytes
          expect((yield* Effect.promise(() => probe(gif))).frames, page).toBe(4)
          expect(yield* pixelAt(gif, 16, 16, 3), page).toEqual([0, 255, 0])
        }
        yield* Effect.sleep("300 millis")
        expect(outside.connections()).toBe(0)
      }))

    it.effect("the page loads data: URIs and the platform's own public files", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const green = yield* api.canvases.create({ payload: { title: "Green", html: "<body style='margin:0;background:rgb(0,255,0)'></body>" } })
        const tile = yield* api.canvases.render({ params: { canvas_id: green.id }, payload: { format: "png", width: 16, height: 16 } })
        const blue = "data:image/svg+xml," + encodeURIComponent("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10' fill='rgb(0,0,255)'/></svg>")
        const canvas = yield* api.canvases.create({
          payload: {
            title: "Composite",
            html: `<body style="margin:0;background:#fff"><img src="${tile.url}" style="display:block;width:50px;height:50px"><img src="${blue}" style="display:block;width:50px;height:50px"></body>`
          }
        })
        const rendered = yield* api.canvases.render({ params: { canvas_id: canvas.id }, payload: { format: "png", width: 100, height: 100 } })
        const bytes = (yield* download(rendered.url)).bytes
        expect(yield* pixelAt(bytes, 25, 25)).toEqual([0, 255, 0])
        expect(yield* pixelAt(bytes, 25, 75)).toEqual([0, 0, 255])
        expect(yield* pixelAt(bytes, 75, 25)).toEqual([255, 255, 255])
      }))

    it.effect("a page that loops forever or allocates without end is stopped with a 400 naming why, and the pool renders on", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const path = (id: string) => `/api/v0/content/canvases/${id}/render`
        const endless = yield* api.canvases.create({ payload: { title: "Loop", html: "<script>while (true) {}</script>" } })
        const started = Date.now()
        expectErrorResponse(yield* send(postJson(path(endless.id), { format: "png" }, tenant.apiKey)), 400, /scripts ran longer than 5000 ms while loading/)
        expect(Date.now() - started).toBeLessThan(10_000)
        const frameLoop = yield* api.canvases.create({
          payload: { title: "Frame loop", html: "<script>setTimeout(() => { while (true) {} }, 200)</script>" }
        })
        expectErrorResponse(
          yield* send(postJson(path(frameLoop.id), { format: "gif", durationMs: 500, fps: 10, width: 32, height: 32 }, tenant.apiKey)),
          400,
          /scripts ran longer than 5000 ms at frame 2/
        )
        const hungry = yield* api.canvases.create({
          payload: { title: "Hungry", html: "<script>const kept = []; for (;;) kept.push(new Array(1e6).fill(Math.random()))</script>" }
        })
        expectErrorResponse(yield* send(postJson(path(hungry.id), { format: "png" }, tenant.apiKey)), 400, /ran out of memory or crashed/)
        const fine = yield* api.canvases.create({ payload: { title: "Fine", html: "<p>ok</p>" } })
        expect((yield* api.canvases.render({ params: { canvas_id: fine.id }, payload: { format: "webp", width: 32, height: 32 } })).format).toBe("webp")
      }), 60_000)

    it.effect("caps pixels, refuses bad fields and other companies' canvases", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Big", html: "<p>x</p>" } })
        const path = `/api/v0/content/canvases/${canvas.id}/render`
        expectErrorResponse(
          yield* send(postJson(path, { format: "png", width: 4096, height: 4096, scale: 2 }, tenant.apiKey)),
          400,
          "4096×4096 at scale 2 is 67108864 pixels; a still may have at most 16777216"
        )
        expectErrorResponse(yield* send(postJson(path, { format: "mp4", width: 4096, height: 4096 }, tenant.apiKey)), 400, /video frame may have at most/)
        for (const [body, field] of [
          [{ format: "bmp" }, "format"],
          [{ format: "png", width: 15 }, "width"],
          [{ format: "png", height: 5000 }, "height"],
          [{ format: "gif", fps: 61 }, "fps"],
          [{ format: "gif", durationMs: 499 }, "durationMs"],
          [{ format: "png", scale: 4 }, "scale"],
          [{ format: "png", colour: "red" }, "colour"]
        ] as const) {
          expectErrorResponse(yield* send(postJson(path, body, tenant.apiKey)), 400, field)
        }
        expectErrorResponse(yield* send(postJson(path, { format: "png" }, other.apiKey)), 404)
      }))

    it.effect("100 concurrent renders queue for the pool's two pages and all complete", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const canvas = yield* api.canvases.create({ payload: { title: "Burst", html: "<p>burst</p>" } })
        const pool = yield* BrowserPool
        const before = process.memoryUsage().rss
        const exits = yield* Effect.all(
          Array.from({ length: 100 }, () =>
            Effect.exit(api.canvases.render({ params: { canvas_id: canvas.id }, payload: { format: "png", width: 16, height: 16 } }))),
          { concurrency: "unbounded" }
        )
        expect(exits.filter(Exit.isSuccess)).toHaveLength(100)
        // The last pages' contexts close just after their renders answered.
        const stats = yield* pool.stats.pipe(
          Effect.repeat({ until: (now) => now.activePages === 0, schedule: Schedule.spaced("10 millis"), times: 500 })
        )
        expect(stats.peakActivePages).toBeLessThanOrEqual(2)
        expect(stats).toMatchObject({ activePages: 0, waiting: 0 })
        // The queue holds requests, not pages: the process grows by far less than a browser page each.
        expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024)
        expect((yield* api.canvases.listRenders({ params: { canvas_id: canvas.id }, query: {} })).total).toBe(100)
      }), 120_000)
  })
})
