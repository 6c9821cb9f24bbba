// `npm run bench:render`: canvas rendering, end to end over HTTP
// (POST /api/v0/content/canvases/{id}/render: lookup, sandboxed page,
// virtual clock, screenshot, public file), in one run next to the same
// bundled Chromium driven directly by playwright-core (a context and page
// per render, setContent, a PNG screenshot) with the same number of pages at
// once:
// - PNG 1200×630 social card: p50 latency and renders per second of each,
//   the platform's share of the direct throughput, and the browsers' RSS;
// - a 3 s, 30 fps, 1080×1080 loop as MP4 and as GIF: wall time and bytes.
// Settings: BENCH_RENDERS (default 40 per side), BENCH_ROUNDS (default 4: the
// sides alternate), BENCH_CONCURRENCY (pages at once, default 2), BENCH_VIDEO
// (0 skips the loops), BENCH_BLOB_DIR (1: the bytes in a folder, not the database).
import Chromium from "@sparticuz/chromium"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { HttpServer } from "effect/http"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer } from "node:http"
import { chromium } from "playwright-core"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { makeServer } from "../src/app/Server.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { flagFromEnv, numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, writeResults } from "./bench/report.ts"
import { latencySummary } from "./bench/stats.ts"

const renders = numberFromEnv("BENCH_RENDERS", 40)
const concurrency = numberFromEnv("BENCH_CONCURRENCY", 2)
const withVideo = numberFromEnv("BENCH_VIDEO", 1) !== 0
const rounds = numberFromEnv("BENCH_ROUNDS", 4)

const socialCard = `<!doctype html><html><head><style>
  body { margin: 0; width: 1200px; height: 630px; display: flex; font-family: sans-serif;
    background: linear-gradient(135deg, #1e3a8a, #7c3aed); color: white }
  main { margin: auto 80px } h1 { font-size: 72px; margin: 0 0 24px } p { font-size: 32px; opacity: .85 }
  .badge { display: inline-block; padding: 8px 20px; border-radius: 999px; background: rgba(255,255,255,.2); font-size: 24px }
</style></head><body><main><span class="badge">Launch week</span><h1>Ship renders in one call</h1>
<p>HTML in, PNG out: social cards, banners and loops.</p></main></body></html>`

const loop = `<!doctype html><style>
  body { margin: 0; background: #0f172a; display: grid; place-items: center; height: 100vh }
  .dot { width: 240px; height: 240px; border-radius: 50%; background: #38bdf8; animation: pulse 1s ease-in-out infinite alternate }
  @keyframes pulse { from { transform: scale(.6); opacity: .5 } to { transform: scale(1.2); opacity: 1 } }
</style><div class="dot"></div>`

/** Resident memory (kB) of every process below this one: the browsers and their renderers. */
const descendantsRss = () => {
  const parents = new Map<number, number>()
  const rss = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8")
      parents.set(Number(entry), Number(/PPid:\s+(\d+)/.exec(status)?.[1]))
      rss.set(Number(entry), Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0))
    } catch {
      // the process ended meanwhile
    }
  }
  const below = (pid: number): boolean => {
    for (let current = parents.get(pid), hops = 0; current !== undefined && hops < 20; current = parents.get(current), hops++) {
      if (current === process.pid) return true
    }
    return false
  }
  return [...rss].filter(([pid]) => below(pid)).reduce((sum, [, kb]) => sum + kb, 0)
}

/** Runs `total` calls of `once`, `concurrency` at a time: each call's milliseconds, the seconds of the whole, peak RSS. */
const measure = async (total: number, once: () => Promise<void>) => {
  const latencies: Array<number> = []
  let next = 0
  let peakRssKb = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      next++
      const began = performance.now()
      await once()
      latencies.push(performance.now() - began)
      peakRssKb = Math.max(peakRssKb, descendantsRss())
    }
  }))
  const used = process.cpuUsage(cpu)
  return { latencies, seconds: (performance.now() - started) / 1000, peakRssKb, processCpuMs: (used.user + used.system) / 1000 }
}

type Measured = Awaited<ReturnType<typeof measure>>

const summary = (runs: ReadonlyArray<Measured>) => {
  const latencies = runs.flatMap((run) => run.latencies)
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0)
  return {
    ...latencySummary(latencies),
    perSecond: latencies.length / seconds,
    /** CPU time of this process (every thread: HTTP, the database's thread, playwright's side) per render. */
    processCpuMsPerRender: runs.reduce((sum, run) => sum + run.processCpuMs, 0) / latencies.length,
    peakRssMb: Math.max(...runs.map((run) => run.peakRssKb)) / 1024
  }
}

/** The same Chromium as the platform's, driven by playwright-core alone: a context and page per render. */
const directRenderer = async () => {
  const browser = await chromium.launch({ executablePath: await Chromium.executablePath(), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] })
  const once = async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 630 } })
    const page = await context.newPage()
    await page.setContent(socialCard)
    await page.screenshot({ type: "png" })
    await context.close()
  }
  return { once, close: () => browser.close() }
}

/** A temporary folder for the renders' bytes, removed when the script ends. */
const blobFolder = () => {
  const folder = mkdtempSync(join(tmpdir(), "bench-blobs-"))
  process.on("exit", () => rmSync(folder, { recursive: true, force: true }))
  return folder
}

const settings = settingsWith({
  // BENCH_BLOB_DIR=1: the renders' bytes in a temporary folder (BLOB_DIR) instead of the database.
  files: { blobDir: flagFromEnv("BENCH_BLOB_DIR") ? Option.some(blobFolder()) : Option.none() },
  bootstrap: false,
  logLevel: "Error",
  rateLimitPerMinute: 1_000_000,
  browser: { browsers: 1, pagesPerBrowser: concurrency, recycleAfter: 100_000 }
})

const server = makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }), inMemoryStorage, {
  logAddress: false
}).pipe(Layer.provideMerge(settings))

const program = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  const base = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}/api/v0`
  const tenant = yield* Effect.orDie(Admin.bootstrap({ organization: "Bench", company: "Bench", email: "bench@example.com" }))
  const startedAt = new Date()
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "x-api-key": tenant.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    const answer = await response.json() as { id: string; bytes: number; error?: string }
    if (response.status !== 201) throw new Error(`${response.status}: ${answer.error}`)
    return answer
  }
  const card = yield* Effect.promise(() => call("/content/canvases", { title: "Social card", html: socialCard }))
  const renderCard = async () => void await call(`/content/canvases/${card.id}/render`, { format: "png" })
  // Rounds alternate the two sides, so that the machine's changing load falls on both.
  const { platform, baseline } = yield* Effect.promise(async () => {
    const direct = await directRenderer()
    await measure(concurrency * 2, renderCard)
    await measure(concurrency * 2, direct.once)
    const sides = { platform: [] as Array<Measured>, baseline: [] as Array<Measured> }
    for (let round = 0; round < rounds; round++) {
      sides.platform.push(await measure(Math.ceil(renders / rounds), renderCard))
      sides.baseline.push(await measure(Math.ceil(renders / rounds), direct.once))
    }
    await direct.close()
    return { platform: summary(sides.platform), baseline: summary(sides.baseline) }
  })
  const rows = [["platform (HTTP, sandbox, stored)", platform] as const, ["playwright-core directly", baseline] as const]
  const stillTable = formatTable(
    ["PNG 1200×630", "renders", "p50 ms", "p99 ms", "renders/s", "Node CPU ms/render", "browsers' peak RSS MB"],
    rows.map(([name, result]) => [
      name,
      String(result.count),
      fixed(result.p50Ms, 0),
      fixed(result.p99Ms, 0),
      fixed(result.perSecond, 2),
      fixed(result.processCpuMsPerRender, 0),
      fixed(result.peakRssMb, 0)
    ])
  )
  const share = platform.perSecond / baseline.perSecond
  const videos: Array<{ format: string; seconds: number; bytes: number }> = []
  if (withVideo) {
    const animation = yield* Effect.promise(() => call("/content/canvases", { title: "Loop", html: loop }))
    for (const format of ["mp4", "gif"]) {
      const began = performance.now()
      const rendered = yield* Effect.promise(() =>
        call(`/content/canvases/${animation.id}/render`, { format, width: 1080, height: 1080, durationMs: 3000, fps: 30 }))
      videos.push({ format, seconds: (performance.now() - began) / 1000, bytes: rendered.bytes })
    }
  }
  const videoTable = formatTable(["3 s × 30 fps, 1080×1080", "wall s", "bytes"], videos.map((video) => [video.format, fixed(video.seconds, 1), String(video.bytes)]))
  const file = writeResults("render", startedAt, { renders, rounds, concurrency, platform, baseline, share, videos })
  yield* Console.log(`${stillTable}\nplatform / direct throughput: ${fixed(share * 100, 0)} % (${concurrency} pages at once)\n\n${videoTable}\n${file}`)
})

NodeRuntime.runMain(program.pipe(Effect.provide(server)))
