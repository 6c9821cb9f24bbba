import { Context, Duration, Effect, Layer } from "effect"
import type { BrowserContext, Page, Route } from "playwright-core"
import { ConversionPool, pageToMarkdown } from "../../work/documents/ConversionPool.ts"
import { publicUrl, storeFile } from "../files/Files.ts"
import { BrowserPool } from "../../platform/BrowserPool.ts"
import { GuardedFetch } from "../../platform/Outbound.ts"
import type { BrowserAction, ExtractedPage } from "./Api.ts"
import { BrowserBusy, BrowserRefused, BrowserUnavailable } from "./Errors.ts"
import { ExtractConfig } from "./ExtractConfig.ts"

/**
 * Web pages read in the browser pool (DESIGN §7.8). The page never touches
 * the network itself: every request it makes is intercepted and fetched by
 * the outbound guard (`GuardedFetch`: http(s) only, each host resolved and
 * checked, the connection made to the checked address), then handed to the
 * page; a refused request is aborted. A redirect is answered as a redirect,
 * so the browser asks again and the guard checks the new address. Images,
 * media and fonts are loaded only for a screenshot. Decisions in docs/browser.md.
 */

export interface ExtractRequest {
  readonly url: string
  readonly waitFor?: string | undefined
  readonly screenshot?: boolean | undefined
  readonly actions?: ReadonlyArray<BrowserAction> | undefined
}

export interface BrowserExtractService {
  /** Loads and reads a page; a screenshot becomes a public file of `companyId`. */
  readonly extract: (companyId: string, request: ExtractRequest) => Effect.Effect<typeof ExtractedPage.Type, BrowserRefused | BrowserBusy | BrowserUnavailable>
}

const viewport = { width: 1280, height: 800 }

/** Links answered at most, and the longest link text kept. */
const maxLinks = 500
const maxLinkText = 200

const onlyForScreenshots = new Set(["image", "media", "font"])

/** What the interception saw: the bytes fetched so far, and the guard's refusal of the page itself. */
interface Traffic {
  bytes: number
  overCap: boolean
  documentRefusal: string | undefined
  /** Where the guard's fetch of the page itself was redirected to: the browser navigates there. */
  redirect: string | undefined
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!

export class BrowserExtract extends Context.Service<BrowserExtract, BrowserExtractService>()("browser/BrowserExtract") {
  static readonly layer = Layer.effect(BrowserExtract, Effect.gen(function*() {
    const settings = yield* ExtractConfig
    const pool = yield* BrowserPool
    const guard = yield* GuardedFetch
    const services = yield* Effect.context<
      Effect.Services<ReturnType<typeof pageToMarkdown> | ReturnType<typeof storeFile> | ReturnType<typeof publicUrl>>
    >()
    const run = Effect.runPromiseWith(services)

    const intercept = (context: BrowserContext, page: Page, traffic: Traffic, screenshot: boolean) => {
      const handle = async (route: Route) => {
        const request = route.request()
        const isDocument = request.isNavigationRequest() && request.frame() === page.mainFrame()
        const method = request.method()
        if (traffic.overCap || (!screenshot && onlyForScreenshots.has(request.resourceType()))) return route.abort("blockedbyclient")
        if (method !== "GET" && method !== "POST" && method !== "HEAD") return route.abort("blockedbyclient")
        const headers: Record<string, string> = {}
        for (const name of ["accept", "accept-language", "content-type"]) {
          const value = request.headers()[name]
          if (value !== undefined) headers[name] = value
        }
        const fetched = await run(Effect.result(guard.fetch(request.url(), { method, headers, body: request.postData() ?? undefined })))
        if (fetched._tag === "Failure") {
          if (isDocument) traffic.documentRefusal = fetched.failure.message
          return route.abort(fetched.failure._tag === "OutboundRefused" ? "blockedbyclient" : "failed")
        }
        const answer = fetched.success
        traffic.bytes += answer.body.length
        if (traffic.bytes > settings.maxBytes) {
          traffic.overCap = true
          return route.abort("blockedbyclient")
        }
        // A redirect the browser would follow outside the interception: it navigates to the new address itself.
        if (isDocument && answer.url !== request.url()) {
          traffic.redirect = answer.url
          return route.abort("aborted")
        }
        return route.fulfill({
          status: answer.status,
          headers: answer.contentType === undefined ? {} : { "content-type": answer.contentType },
          body: Buffer.from(answer.body)
        })
      }
      return Promise.all([
        context.routeWebSocket(/.*/, (socket) => socket.close()),
        context.route("**/*", (route) => handle(route).catch(() => route.abort("failed").catch(() => undefined)))
      ])
    }

    const act = (page: Page, action: BrowserAction, timeout: number) => {
      if ("click" in action) return page.click(action.click, { timeout })
      if ("type" in action) return page.fill(action.type.selector, action.type.text, { timeout })
      if ("scroll" in action) return page.mouse.wheel(0, action.scroll)
      return typeof action.wait === "number"
        ? page.waitForTimeout(action.wait)
        : page.waitForSelector(action.wait, { timeout }).then(() => undefined)
    }

    const timedOut = () => new BrowserRefused({ message: `The page did not load within ${settings.timeoutMs} ms (BROWSER_TIMEOUT_MS)` })

    const capped = () => new BrowserRefused({ message: `The page loaded more than ${settings.maxBytes} bytes, the most a page may load` })

    const read = (page: Page, request: ExtractRequest, traffic: Traffic, deadline: number) =>
      Effect.tryPromise({
        try: async () => {
          const left = () => Math.max(1, deadline - Date.now())
          const visit = (url: string): Promise<unknown> =>
            page.goto(url, { waitUntil: "load", timeout: left() }).catch((error) => {
              const redirect = traffic.redirect
              traffic.redirect = undefined
              if (traffic.overCap) throw capped()
              if (traffic.documentRefusal !== undefined) throw new BrowserRefused({ message: traffic.documentRefusal })
              if (redirect !== undefined) return visit(redirect)
              throw error
            })
          await visit(request.url)
          if (request.waitFor !== undefined) await page.waitForSelector(request.waitFor, { timeout: left() })
          for (const [index, action] of (request.actions ?? []).entries()) {
            await act(page, action, left()).catch((error) => {
              throw new BrowserRefused({ message: `Action ${index + 1} (${Object.keys(action)[0]}) failed: ${firstLine(error)}` })
            })
          }
          if (traffic.overCap) throw capped()
          const links = await page.$$eval("a[href]", (anchors) =>
            anchors.map((anchor) => ({ url: (anchor as unknown as { href: string }).href, text: String(anchor.textContent ?? "").trim() })))
          return {
            finalUrl: page.url(),
            title: await page.title(),
            html: await page.content(),
            links,
            shot: request.screenshot === true ? await page.screenshot({ type: "png" }) : undefined
          }
        },
        catch: (error) => {
          if (error instanceof BrowserRefused) return error
          if (error instanceof Error && error.name === "TimeoutError") return timedOut()
          return new BrowserRefused({ message: `The page could not be loaded: ${firstLine(error)}` })
        }
      })

    const extract = (companyId: string, request: ExtractRequest) =>
      Effect.gen(function*() {
        yield* guard.check(request.url).pipe(Effect.mapError((refused) => new BrowserRefused({ message: refused.message })))
        const traffic: Traffic = { bytes: 0, overCap: false, documentRefusal: undefined, redirect: undefined }
        const loaded = yield* pool.withPage({ viewport, serviceWorkers: "block", acceptDownloads: false }, (page, context) =>
          Effect.gen(function*() {
            page.on("dialog", (dialog) => void dialog.dismiss().catch(() => undefined))
            yield* Effect.promise(() => intercept(context, page, traffic, request.screenshot === true))
            return yield* read(page, request, traffic, Date.now() + settings.timeoutMs)
          }).pipe(Effect.timeoutOrElse({
            duration: Duration.millis(settings.timeoutMs + 1_000),
            orElse: () => Effect.fail(timedOut())
          }))).pipe(
            Effect.catchTag("BrowserFailed", (failed) =>
              Effect.fail(failed.reason === "busy" ? new BrowserBusy({ message: failed.message }) : new BrowserUnavailable({ message: failed.message })))
          )
        const converted = yield* Effect.provideContext(pageToMarkdown(loaded.html), services)
        if (!converted.ok) return yield* new BrowserRefused({ message: `The page could not be read: it ${converted.reason}` })
        const seen = new Set<string>()
        const links = loaded.links.filter((link) => /^https?:/.test(link.url) && !seen.has(link.url) && seen.add(link.url))
          .slice(0, maxLinks)
          .map((link) => ({ url: link.url, text: link.text.replace(/\s+/g, " ").slice(0, maxLinkText) }))
        const screenshotUrl = loaded.shot === undefined ? undefined : yield* Effect.provideContext(
          Effect.flatMap(
            storeFile({ companyId, ownerId: "browser", name: "screenshot.png", contentType: "image/png", bytes: new Uint8Array(loaded.shot), ...viewport }),
            publicUrl
          ),
          services
        )
        return {
          url: request.url,
          finalUrl: loaded.finalUrl,
          title: loaded.title,
          markdown: converted.content,
          links,
          ...(screenshotUrl === undefined ? {} : { screenshotUrl })
        }
      })

    return { extract }
  })).pipe(Layer.provide(ConversionPool.layer))
}
