import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schedule } from "effect"
import { imageSize } from "image-size"
import { browserDefaults, type BrowserSettings, makeBrowserPool } from "../../src/platform/BrowserPool.ts"

const pool = (overrides: Partial<BrowserSettings> = {}) => makeBrowserPool({ ...browserDefaults, ...overrides })

/** The pool's stats once every page's context has closed (closing runs after the use has its answer). */
const settled = (browsers: Effect.Success<ReturnType<typeof pool>>) =>
  browsers.stats.pipe(Effect.repeat({ until: (stats) => stats.activePages === 0, schedule: Schedule.spaced("10 millis"), times: 500 }))

const html = (body: string) => `data:text/html,${encodeURIComponent(body)}`

describe("BrowserPool", () => {
  it.live("starts no browser before the first page, then renders in the bundled Chromium", () =>
    Effect.gen(function*() {
      const browsers = yield* pool()
      expect((yield* browsers.stats).launched).toBe(0)
      const png = yield* browsers.withPage({ viewport: { width: 320, height: 200 }, deviceScaleFactor: 2 }, (page) =>
        Effect.promise(async () => {
          await page.goto(html("<body style='background:#f00'>hi</body>"))
          return page.screenshot()
        }))
      expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47])
      expect(imageSize(png)).toMatchObject({ width: 640, height: 400 })
      expect(yield* settled(browsers)).toMatchObject({ launched: 1, browsers: 1, activePages: 0 })
    }).pipe(Effect.scoped))

  it.live("gives every use a context of its own: nothing stored by one is seen by the next", () =>
    Effect.gen(function*() {
      const browsers = yield* pool({ browsers: 1, pagesPerBrowser: 1 })
      const visit = (store: boolean) =>
        browsers.withPage({}, (_page, context) =>
          Effect.promise(async () => {
            await context.addCookies([{ name: "probe", value: "x", url: "https://example.test/" }].filter(() => store))
            return (await context.cookies("https://example.test/")).length
          }))
      expect(yield* visit(true)).toBe(1)
      expect(yield* visit(false)).toBe(0)
      expect((yield* browsers.stats).launched).toBe(1)
    }).pipe(Effect.scoped))

  it.live("bounds the pages open at once and serves every queued use in turn", () =>
    Effect.gen(function*() {
      const browsers = yield* pool({ browsers: 1, pagesPerBrowser: 2 })
      const results = yield* Effect.all(
        Array.from({ length: 8 }, (_, index) =>
          browsers.withPage({}, (page) => Effect.promise(() => page.evaluate((n) => n * 2, index)))),
        { concurrency: "unbounded" }
      )
      expect(results).toEqual([0, 2, 4, 6, 8, 10, 12, 14])
      expect(yield* settled(browsers)).toMatchObject({ peakActivePages: 2, launched: 1, activePages: 0, waiting: 0 })
    }).pipe(Effect.scoped))

  it.live("refuses a use as busy when the queue is full", () =>
    Effect.gen(function*() {
      const browsers = yield* pool({ browsers: 1, pagesPerBrowser: 1, queueMax: 2 })
      const exits = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.exit(browsers.withPage({}, () => Effect.sleep("300 millis")))),
        { concurrency: "unbounded" }
      )
      const refused = exits.filter(Exit.isFailure)
      // One on the page, two waiting; the other two are turned away.
      expect(exits.filter(Exit.isSuccess)).toHaveLength(3)
      expect(refused).toHaveLength(2)
      expect(String(refused[0]!.cause)).toContain("The browsers are busy")
    }).pipe(Effect.scoped))

  it.live("retires a browser after its pages and replaces one that crashed", () =>
    Effect.gen(function*() {
      const browsers = yield* pool({ browsers: 1, pagesPerBrowser: 1, recycleAfter: 2 })
      const title = browsers.withPage({}, (page) => Effect.promise(() => page.title()))
      yield* title
      yield* title
      expect(yield* settled(browsers)).toMatchObject({ launched: 1, browsers: 0 })
      yield* title
      expect((yield* browsers.stats).launched).toBe(2)
      yield* browsers.withPage({}, (page) => Effect.promise(() => page.context().browser()!.close()))
      expect(yield* title).toBe("")
      expect((yield* browsers.stats).launched).toBe(3)
    }).pipe(Effect.scoped))
})
