import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { imageSize } from "image-size"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { BrowserExtract } from "../../../src/media/browser/Extract.ts"
import { expectErrorResponse, postJson, send } from "../../support/Http.ts"
import { client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"

/** A web server on loopback answering `pages` by path, recording every path asked for. */
const site = (pages: (origin: string) => Record<string, (response: ServerResponse, request: IncomingMessage) => void>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly origin: string; readonly seen: Array<string>; readonly close: () => void }>((resolve) => {
        const seen: Array<string> = []
        let origin = ""
        const server = createServer((request, response) => {
          seen.push(`${request.method} ${request.url}`)
          const page = pages(origin)[request.url ?? ""]
          if (page === undefined) {
            response.statusCode = 404
            return response.end("missing")
          }
          page(response, request)
        })
        server.on("upgrade", (request, socket) => {
          seen.push(`UPGRADE ${request.url}`)
          socket.destroy()
        })
        server.listen(0, "127.0.0.1", () => {
          origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
          resolve({ origin, seen, close: () => server.close() })
        })
      })
    ),
    (server) => Effect.sync(server.close)
  )

const html = (body: string) => (response: ServerResponse) => {
  response.setHeader("content-type", "text/html; charset=utf-8")
  response.end(body)
}

/** 127.0.0.1 is the test's "public" site; every other internal name and address stays refused. */
const settings = {
  outbound: { allowedHosts: ["127.0.0.1"] },
  extract: { timeoutMs: 4_000, maxBytes: 200_000 },
  browser: { browsers: 1, pagesPerBrowser: 2 }
}

describe("browser extract", () => {
  it.layer(testServer(pgliteStorage, settings), { excludeTestServices: true })("", (it) => {
    it.effect("loads a page after its scripts and actions, and answers title, Markdown, links and a screenshot", () =>
      Effect.gen(function*() {
        const web = yield* site((origin) => ({
          "/start": (response) => {
            response.statusCode = 302
            response.setHeader("location", `${origin}/article`)
            response.end()
          },
          "/article": html(`<title>Pricing</title><h1>Plans</h1><p>Static text.</p>
            <a href="/team">Our team</a><a href="https://example.com/x">Elsewhere</a><a href="mailto:a@b.c">Mail</a>
            <input id=q><button id=go onclick="document.getElementById('out').textContent = 'Searched: ' + document.getElementById('q').value">Go</button>
            <div id=out></div><script>fetch('/data.json').then(r => r.json()).then(d => { const p = document.createElement('p'); p.id = 'late'; p.textContent = d.text; document.body.append(p) })</script>`),
          "/data.json": (response) => {
            response.setHeader("content-type", "application/json")
            response.end(JSON.stringify({ text: "Loaded by script" }))
          }
        }))
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const page = yield* api.browser.extract({
          payload: {
            url: `${web.origin}/start`,
            waitFor: "#late",
            screenshot: true,
            actions: [{ type: { selector: "#q", text: "pro plan" } }, { click: "#go" }, { wait: 50 }, { scroll: 200 }]
          }
        })
        expect(page).toMatchObject({ url: `${web.origin}/start`, finalUrl: `${web.origin}/article`, title: "Pricing" })
        expect(page.markdown).toContain("# Plans\n\nStatic text.")
        expect(page.markdown).toContain("Loaded by script")
        expect(page.markdown).toContain("Searched: pro plan")
        expect(page.links).toEqual([{ url: `${web.origin}/team`, text: "Our team" }, { url: "https://example.com/x", text: "Elsewhere" }])
        expect(web.seen).toEqual(expect.arrayContaining(["GET /start", "GET /article", "GET /data.json"]))
        const shot = yield* Effect.flatMap(HttpClient.HttpClient, (http) =>
          Effect.flatMap(http.execute(HttpClientRequest.get(new URL(page.screenshotUrl!).pathname)), (response) => response.arrayBuffer)).pipe(Effect.orDie)
        expect(imageSize(new Uint8Array(shot))).toMatchObject({ type: "png", width: 1280, height: 800 })
      }))

    it.effect("every request of the page passes the outbound guard: internal hosts the page asks for receive nothing", () =>
      Effect.gen(function*() {
        const inside = yield* site(() => ({ "/secret": html("<p>internal secret</p>") }))
        const port = new URL(inside.origin).port
        // localhost is 127.0.0.1 by another name: the operator allowed only the address, so the name is refused.
        const internal = `http://localhost:${port}`
        const web = yield* site(() => ({
          "/page": html(`<title>Outer</title><img src="${internal}/img.png"><iframe src="${internal}/secret"></iframe>
            <link rel=stylesheet href="${internal}/s.css"><script src="http://169.254.169.254/latest/meta-data/"></script>
            <script>fetch("${internal}/secret").then(r => r.text()).then(t => document.title = t).catch(() => document.title = "blocked")
              try { new WebSocket("ws://localhost:${port}/socket") } catch {}</script><p>outer page</p>`)
        }))
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const page = yield* api.browser.extract({ payload: { url: `${web.origin}/page`, actions: [{ wait: 300 }] } })
        expect(page.title).toBe("blocked")
        expect(page.markdown).toContain("outer page")
        expect(page.markdown).not.toContain("internal secret")
        expect(inside.seen).toEqual([])
        // Only the site itself, never the internal one, saw requests: the page's own GET, nothing else.
        expect(web.seen).toEqual(["GET /page"])
      }))

    it.effect("refuses internal and non-http URLs, pages that time out or load too much, with a 400 naming why", () =>
      Effect.gen(function*() {
        const web = yield* site((origin) => ({
          "/slow": () => undefined,
          "/huge": html(`<p>${"x".repeat(300_000)}</p>`),
          "/to-inside": (response) => {
            response.statusCode = 302
            response.setHeader("location", origin.replace("127.0.0.1", "localhost") + "/slow")
            response.end()
          }
        }))
        const tenant = yield* seedTenant()
        const extract = (body: object) => send(postJson("/api/v0/browser/extract", body, tenant.apiKey))
        expectErrorResponse(yield* extract({ url: "http://10.0.0.1/" }), 400, "10.0.0.1 is an internal address (private)")
        expectErrorResponse(yield* extract({ url: "file:///etc/passwd" }), 400, "Only http and https URLs can be fetched, not file")
        expectErrorResponse(yield* extract({ url: `${web.origin}/to-inside` }), 400, /localhost resolves to an internal address/)
        expectErrorResponse(yield* extract({ url: `${web.origin}/huge` }), 400, "more than 200000 bytes")
        const started = Date.now()
        expectErrorResponse(yield* extract({ url: `${web.origin}/slow` }), 400, "The page did not load within 4000 ms (BROWSER_TIMEOUT_MS)")
        expect(Date.now() - started).toBeLessThan(10_000)
        expectErrorResponse(yield* extract({ url: `${web.origin}/missing`, actions: [{ click: "#nothing" }] }), 400, "Action 1 (click) failed")
        expectErrorResponse(yield* extract({ url: web.origin, actions: Array.from({ length: 21 }, () => ({ wait: 1 })) }), 400, "actions")
        expectErrorResponse(yield* extract({ url: web.origin, actions: [{ hover: "#x" }] }), 400)
      }), 60_000)

    it.effect("the same service answers agents' browse_page calls without HTTP", () =>
      Effect.gen(function*() {
        const web = yield* site(() => ({ "/": html("<title>Tool</title><p>for the agent</p>") }))
        const tenant = yield* seedTenant()
        const page = yield* BrowserExtract.use((browser) => browser.extract(tenant.companyId, { url: `${web.origin}/` }))
        expect(page).toMatchObject({ title: "Tool", finalUrl: `${web.origin}/` })
        expect(page.markdown).toContain("for the agent")
        expect(page.screenshotUrl).toBeUndefined()
      }))
  })
})
