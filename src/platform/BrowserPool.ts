import { Config, Context, Data, Duration, Effect, Layer, Option, Semaphore } from "effect"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core"
import { positiveInt } from "./AppConfig.ts"

/**
 * Headless Chromium for canvas rendering and browser automation: a bounded
 * pool of browsers, each serving a bounded number of pages at once, every
 * page in a context of its own (no cookies, storage or cache shared between
 * two uses). The browser is `CHROMIUM_PATH` when set, else the headless shell
 * `@sparticuz/chromium` ships (unpacked to the temporary folder on first
 * use), so `npm ci && npm start` renders without a system package. Browsers
 * start on the first page, not with the service; one is retired after
 * `BROWSER_RECYCLE_AFTER` pages, and one that crashes (or a page that will not
 * close) is dropped and replaced by the next page's. Decisions in docs/canvases.md.
 */

export interface BrowserSettings {
  /** `CHROMIUM_PATH`: the Chromium to run; none: the bundled headless shell. */
  readonly chromiumPath: Option.Option<string>
  /** `BROWSER_POOL_SIZE`: browsers at most. */
  readonly browsers: number
  /** `BROWSER_PAGES_PER_BROWSER`: pages one browser serves at once. */
  readonly pagesPerBrowser: number
  /** `BROWSER_RECYCLE_AFTER`: pages a browser serves before it is replaced. */
  readonly recycleAfter: number
  /** `BROWSER_PAGE_MEMORY_MB`: the JavaScript heap of one page; past it the page crashes. */
  readonly pageMemoryMb: number
  /** `BROWSER_QUEUE_MAX`: uses waiting for a page at most; further ones are refused as busy. */
  readonly queueMax: number
}

export const browserDefaults: BrowserSettings = {
  chromiumPath: Option.none(),
  browsers: 2,
  pagesPerBrowser: 2,
  recycleAfter: 200,
  pageMemoryMb: 256,
  queueMax: 500
}

export class BrowserConfig extends Context.Service<BrowserConfig, BrowserSettings>()("platform/BrowserConfig") {
  static readonly fromEnv = Config.all({
    chromiumPath: Config.option(Config.NonEmptyString("CHROMIUM_PATH")),
    browsers: positiveInt("BROWSER_POOL_SIZE", browserDefaults.browsers),
    pagesPerBrowser: positiveInt("BROWSER_PAGES_PER_BROWSER", browserDefaults.pagesPerBrowser),
    recycleAfter: positiveInt("BROWSER_RECYCLE_AFTER", browserDefaults.recycleAfter),
    pageMemoryMb: positiveInt("BROWSER_PAGE_MEMORY_MB", browserDefaults.pageMemoryMb),
    queueMax: positiveInt("BROWSER_QUEUE_MAX", browserDefaults.queueMax)
  })

  static readonly layer = Layer.effect(BrowserConfig, Effect.orDie(BrowserConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<BrowserSettings> = {}) =>
    Layer.succeed(BrowserConfig, { ...browserDefaults, ...overrides })
}

/** No browser could be started (`unavailable`), or too many uses are already waiting (`busy`). */
export class BrowserFailed extends Data.TaggedError("BrowserFailed")<{
  readonly reason: "unavailable" | "busy"
  readonly message: string
}> {}

/** How full the pool is: for tests, benchmarks and logs. */
export interface PoolStats {
  readonly browsers: number
  readonly activePages: number
  readonly waiting: number
  /** The most pages open at once since the pool started. */
  readonly peakActivePages: number
  readonly launched: number
}

export interface BrowserPoolService {
  /**
   * Runs `use` on a new page in a new context (closed afterwards, also when
   * `use` fails or is interrupted), waiting for a free page in turn.
   */
  readonly withPage: <A, E, R>(
    options: BrowserContextOptions,
    use: (page: Page, context: BrowserContext) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | BrowserFailed, R>
  readonly stats: Effect.Effect<PoolStats>
}

/**
 * Flags for every browser. Every request a page makes is answered by the
 * caller's request handler (`context.route`); what could still leave on its
 * own (WebSockets, WebRTC, prefetches) goes to a proxy address where nothing
 * listens, so it fails instead of reaching the network. The zygote stays on
 * (no `--no-zygote`): without it every page's renderer process starts from
 * scratch, which cost a social card a quarter of its render time
 * (docs/benchmarks.md).
 */
const chromiumFlags = (settings: BrowserSettings) => [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-domain-reliability",
  "--disable-sync",
  "--no-first-run",
  "--no-pings",
  "--mute-audio",
  "--font-render-hinting=none",
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  `--js-flags=--max-old-space-size=${settings.pageMemoryMb}`
]

/** The bundled headless shell, unpacked on first use; its fonts serve when the system has no fontconfig. */
const bundledChromium = async (): Promise<{ readonly path: string; readonly env: Record<string, string> }> => {
  const { default: Chromium } = await import("@sparticuz/chromium")
  const path = await Chromium.executablePath()
  const systemFonts = existsSync("/etc/fonts/fonts.conf")
  return { path, env: systemFonts || process.env.FONTCONFIG_PATH !== undefined ? {} : { FONTCONFIG_PATH: join(tmpdir(), "fonts") } }
}

interface Slot {
  readonly browser: Browser
  active: number
  served: number
  retiring: boolean
  dead: boolean
}

/** A context that will not close in this time (its page hangs the renderer) costs its browser. */
const closeTimeoutMs = 3_000

export const makeBrowserPool = (settings: BrowserSettings) =>
  Effect.gen(function*() {
    const permits = yield* Semaphore.make(settings.browsers * settings.pagesPerBrowser)
    const launchOne = yield* Semaphore.make(1)
    const slots: Array<Slot> = []
    let waiting = 0
    let activePages = 0
    let peakActivePages = 0
    let launched = 0

    const drop = (slot: Slot) =>
      Effect.sync(() => {
        slot.dead = true
        const index = slots.indexOf(slot)
        if (index >= 0) slots.splice(index, 1)
        return slot.browser
      }).pipe(Effect.flatMap((browser) => Effect.promise(() => browser.close().catch(() => undefined))))

    yield* Effect.addFinalizer(() => Effect.forEach([...slots], drop, { discard: true, concurrency: "unbounded" }))

    const launch = Effect.tryPromise({
      try: async () => {
        const { chromium } = await import("playwright-core")
        const binary = Option.isSome(settings.chromiumPath)
          ? { path: settings.chromiumPath.value, env: {} }
          : await bundledChromium()
        const browser = await chromium.launch({
          executablePath: binary.path,
          args: chromiumFlags(settings),
          env: { ...process.env, ...binary.env },
          timeout: 30_000
        })
        const slot: Slot = { browser, active: 0, served: 0, retiring: false, dead: false }
        browser.on("disconnected", () => {
          slot.dead = true
          const index = slots.indexOf(slot)
          if (index >= 0) slots.splice(index, 1)
        })
        launched++
        return slot
      },
      catch: (error) =>
        new BrowserFailed({
          reason: "unavailable",
          message: `Chromium could not be started (set CHROMIUM_PATH or install @sparticuz/chromium): ${
            error instanceof Error ? error.message.split("\n")[0] : String(error)
          }`
        })
    })

    /** A browser with room for one more page: one already running, else a new one (one launch at a time). */
    const take = launchOne.withPermits(1)(Effect.suspend(() => {
      const free = slots.find((slot) => !slot.dead && !slot.retiring && slot.active < settings.pagesPerBrowser)
      if (free !== undefined) return Effect.succeed(free)
      return Effect.tap(launch, (slot) => Effect.sync(() => slots.push(slot)))
    })).pipe(Effect.tap((slot) =>
      Effect.sync(() => {
        slot.active++
        slot.served++
        if (slot.served >= settings.recycleAfter) slot.retiring = true
        activePages++
        peakActivePages = Math.max(peakActivePages, activePages)
      })
    ))

    const giveBack = (slot: Slot) =>
      Effect.suspend(() => {
        slot.active--
        activePages--
        return slot.retiring && slot.active === 0 && !slot.dead ? drop(slot) : Effect.void
      })

    const closeContext = (slot: Slot, context: BrowserContext) =>
      Effect.promise(() => context.close().catch(() => undefined)).pipe(
        Effect.timeoutOrElse({ duration: Duration.millis(closeTimeoutMs), orElse: () => drop(slot) })
      )

    const withPage = <A, E, R>(
      options: BrowserContextOptions,
      use: (page: Page, context: BrowserContext) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | BrowserFailed, R> =>
      Effect.suspend(() => {
        if (waiting >= settings.queueMax) {
          return Effect.fail(new BrowserFailed({
            reason: "busy",
            message: `The browsers are busy: ${waiting} requests are already waiting; try again shortly`
          }))
        }
        waiting++
        let queued = true
        const leaveQueue = Effect.sync(() => {
          if (queued) waiting--
          queued = false
        })
        const session = Effect.acquireUseRelease(
          take,
          (slot) =>
            Effect.acquireUseRelease(
              Effect.tryPromise({
                try: async () => {
                  const context = await slot.browser.newContext(options)
                  return { context, page: await context.newPage() }
                },
                catch: (error) =>
                  new BrowserFailed({ reason: "unavailable", message: `Chromium could not open a page: ${String(error).split("\n")[0]}` })
              }),
              ({ context, page }) => use(page, context),
              ({ context }) => closeContext(slot, context)
            ),
          giveBack
        )
        return permits.withPermits(1)(Effect.andThen(leaveQueue, session)).pipe(Effect.ensuring(leaveQueue))
      })

    const stats = Effect.sync((): PoolStats => ({ browsers: slots.length, activePages, waiting, peakActivePages, launched }))

    return { withPage, stats } satisfies BrowserPoolService
  })

export class BrowserPool extends Context.Service<BrowserPool, BrowserPoolService>()("platform/BrowserPool") {
  /** The pool with the given settings; its browsers close with the layer. */
  static readonly layer = Layer.effect(BrowserPool, Effect.gen(function*() {
    return yield* makeBrowserPool(yield* BrowserConfig)
  }))

  static readonly live = BrowserPool.layer.pipe(Layer.provide(BrowserConfig.layer))
}
