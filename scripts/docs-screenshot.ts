// `npm run docs:screenshot`: renders the `/docs` reference page in a real
// headless browser and checks that it shows the API, not a blank page.
//
// It starts the service from source on an in-memory embedded database on a free loopback
// port, runs Chromium headless twice against `/docs` — once for the rendered
// DOM (`--dump-dom`), once for a PNG (`--screenshot`) — and checks that the
// DOM holds the page title and operation summaries taken from the OpenAPI
// document, that the samples authenticate with `X-API-Key` (never HTTP Basic)
// and show no meaningless safe-integer bounds, and that the screenshot is not
// blank. The PNG is kept in `bench-results/docs.png` to look at.
//
// Needs a Chromium: Debian's (`apt-get install chromium`) or any other named
// by `CHROMIUM`. It is not part of `npm test`, which must not depend on a
// browser being installed.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { promisify } from "node:util"
import { join } from "node:path"
import { makeServer } from "../src/app/Server.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { freePort } from "./bench/children.ts"
import { resultsDir } from "./bench/report.ts"

const chromium = process.env.CHROMIUM ?? "chromium"

/** A rendered 1280×2400 page of text compresses to far more than a blank one (a few KB). */
const smallestRenderedPng = 40_000

/**
 * Chromium headless, isolated: no profile, sync, updates or background
 * traffic. Asynchronous: the server it loads the page from runs in this process.
 */
const browse = async (args: ReadonlyArray<string>, url: string) => {
  const profile = mkdtempSync(join(tmpdir(), "docs-chromium-"))
  try {
    const { stdout } = await promisify(execFile)(chromium, [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${profile}`,
      "--hide-scrollbars",
      "--window-size=1280,2400",
      // lets the page's scripts run and render before the DOM or pixels are taken
      "--virtual-time-budget=15000",
      ...args,
      url
    ], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 120_000 })
    return stdout
  } finally {
    rmSync(profile, { recursive: true, force: true })
  }
}

interface OpenApiDocument {
  readonly info: { readonly title: string }
  readonly paths: Record<string, Record<string, { readonly summary?: string }>>
}

const check = async (baseUrl: string) => {
  const document = await (await fetch(`${baseUrl}/api/v0/openapi.json`)).json() as OpenApiDocument
  const summaries = Object.values(document.paths).flatMap((methods) =>
    Object.values(methods).flatMap((operation) => (operation.summary === undefined ? [] : [operation.summary]))
  )
  // The page's own script holds every string Scalar can show: only the rendered markup is judged.
  const rendered = async (url: string) => (await browse(["--dump-dom"], url)).replace(/<script[^>]*>[\s\S]*?<\/script>/g, "")
  const dom = await rendered(`${baseUrl}/docs`)
  const shown = summaries.filter((summary) => dom.includes(summary))
  mkdirSync(resultsDir, { recursive: true })
  const png = join(resultsDir, "docs.png")
  await browse([`--screenshot=${png}`], `${baseUrl}/docs`)
  const pngBytes = statSync(png).size
  const failures = [
    ...(dom.includes(document.info.title) ? [] : [`the page does not show the title "${document.info.title}"`]),
    ...(shown.length >= Math.min(10, summaries.length) ? [] : [`the page shows ${shown.length} of ${summaries.length} operation summaries`]),
    ...(pngBytes >= smallestRenderedPng ? [] : [`the screenshot looks blank (${pngBytes} bytes)`]),
    // The samples authenticate as the API does: the key header selected, never HTTP Basic.
    ...(/--header 'X-API-Key: /.test(dom.replace(/<[^>]*>/g, "")) ? [] : ["the first operation's curl sample does not send X-API-Key"]),
    ...(/Basic username|No authentication selected/.test(dom) ? ["the page offers HTTP Basic or no authentication"] : []),
    ...(/9007199254740991/.test(dom) ? ["the page shows the safe-integer bounds"] : [])
  ]
  console.log(`/docs: ${shown.length} of ${summaries.length} operation summaries in the rendered DOM; screenshot ${png} (${pngBytes} bytes)`)
  if (failures.length > 0) throw new Error(`/docs did not render: ${failures.join("; ")}`)
}

const main = Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const server = makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port }), inMemoryStorage, { logAddress: false }).pipe(
    Layer.provide(settingsWith({ adminApiKey: Option.some(Redacted.make("docs-screenshot")), logLevel: "Error", bootstrap: false }))
  )
  yield* Effect.promise(() => check(`http://127.0.0.1:${port}`)).pipe(Effect.provide(server))
})

NodeRuntime.runMain(main)
