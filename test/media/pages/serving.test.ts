import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { staleRevisionMillis } from "../../../src/auth/AccessRevision.ts"
import { PublishedPages } from "../../../src/media/pages/Visitors.ts"
import { expectErrorResponse, type RawResponse, send } from "../../support/Http.ts"
import { wallClockPause } from "../../support/RawSocket.ts"
import {
  backends,
  client,
  postgresUrl,
  seedTenant,
  serversSharingPostgres,
  type StorageServices,
  testServer,
  type Tenant
} from "../../support/TestServer.ts"

/**
 * How published pages are served: from each process's memory, read again
 * after any change of a page (in another process too), never one company's
 * page under another's slug; views counted in memory and written once by the
 * periodic writer.
 */

/** Lookups of published pages that reached the database. */
let lookups = 0
const countingLookups = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.effect(
    PublishedPages,
    PublishedPages.useSync((pages) => ({ find: (address) => Effect.suspend(() => (lookups++, pages.find(address))) }))
  ).pipe(Layer.provideMerge(storage))

/** A tenant with a published page of `html` at `slug`; answers its public path. */
const publishedPage = (tenant: Tenant, slug: string, html: string) =>
  Effect.gen(function*() {
    const api = yield* client({ apiKey: tenant.apiKey })
    const page = yield* api.landingPages.create({ payload: { name: slug, slug, bodyDocument: { html } } })
    const published = yield* api.landingPages.publish({ params: { pageId: page.id }, payload: null })
    return { api, page, path: new URL(published.url!).pathname }
  })

const view = (path: string) => send(HttpClientRequest.get(path))

describe.each(backends)("serving landing pages on $name", ({ storage }) => {
  it.layer(testServer(countingLookups(storage)))((it) => {
    it.effect("a page is looked up once, then served from memory until a change, which the next view shows", () =>
      Effect.gen(function*() {
        const { api, page, path } = yield* publishedPage(yield* seedTenant("cached"), "offer", "<p>one</p>")
        const before = lookups
        for (let i = 0; i < 5; i++) expect((yield* view(path)).text).toContain("<p>one</p>")
        expect(lookups - before).toBe(1)

        yield* api.landingPages.update({ params: { pageId: page.id }, payload: { bodyDocument: { html: "<p>two</p>" } } })
        expect((yield* view(path)).text).toContain("<p>two</p>")
        expect((yield* view(path)).text).toContain("<p>two</p>")
        expect(lookups - before).toBe(2)

        yield* api.landingPages.unpublish({ params: { pageId: page.id }, payload: null })
        expectErrorResponse(yield* view(path), 404, "Page not found")
        yield* api.landingPages.publish({ params: { pageId: page.id }, payload: null })
        expect((yield* view(path)).text).toContain("<p>two</p>")
        yield* api.landingPages.update({ params: { pageId: page.id }, payload: { slug: "renamed" } })
        expectErrorResponse(yield* view(path), 404)
        expect((yield* view(path.replace("/offer", "/renamed"))).text).toContain("<p>two</p>")
        yield* api.landingPages.delete({ params: { pageId: page.id } })
        expectErrorResponse(yield* view(path.replace("/offer", "/renamed")), 404)
      }))

    it.effect("nothing of one company is served under another's slug", () =>
      Effect.gen(function*() {
        const first = yield* publishedPage(yield* seedTenant("first"), "offer", "<p>first company</p>")
        const second = yield* publishedPage(yield* seedTenant("second"), "offer", "<p>second company</p>")
        const only = yield* publishedPage(yield* seedTenant("second"), "only-here", "<p>only</p>")
        const companyOf = (path: string) => path.split("/")[2]!
        for (let i = 0; i < 2; i++) {
          expect((yield* view(first.path)).text).toContain("first company")
          expect((yield* view(second.path)).text).toContain("second company")
          expectErrorResponse(yield* view(`/p/${companyOf(first.path)}/only-here`), 404)
          expect((yield* view(only.path)).text).toContain("<p>only</p>")
        }
        // Company and page slugs cannot be run together into another address.
        expectErrorResponse(yield* view(`/p/${companyOf(first.path)}%2Foffer/x`), 404)
        expectErrorResponse(yield* view(`/p/${companyOf(first.path)}/offer%2Fx`), 404)
      }))

    it.effect("views are counted in memory and written once each by the periodic writer", () =>
      Effect.gen(function*() {
        const { api, page, path } = yield* publishedPage(yield* seedTenant("counted"), "counted", "<p>x</p>")
        const viewAs = (agent: string) => send(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeader("user-agent", agent)))
        const written = SqlClient.SqlClient.use((sql) =>
          sql<{ readonly views: number; readonly unique_visitors: number }>`
            SELECT views::int AS views, unique_visitors::int AS unique_visitors FROM landing_page_days WHERE page_id = ${page.id}`
        ).pipe(Effect.orDie)
        const writtenAfterFlush = Effect.gen(function*() {
          yield* TestClock.adjust("1 second")
          for (let attempt = 0; attempt < 100; attempt++) {
            const rows = yield* written
            if (rows.length > 0) return rows
            yield* wallClockPause(20)
          }
          return yield* written
        })
        yield* viewAs("first")
        yield* viewAs("first")
        yield* viewAs("second")
        expect(yield* written).toEqual([])
        expect(yield* writtenAfterFlush).toEqual([{ views: 3, unique_visitors: 2 }])
        yield* viewAs("first")
        yield* TestClock.adjust("1 second")
        yield* wallClockPause(100)
        expect(yield* written).toEqual([{ views: 4, unique_visitors: 2 }])
        yield* TestClock.adjust("1 second")
        yield* wallClockPause(100)
        expect(yield* written).toEqual([{ views: 4, unique_visitors: 2 }])
        const stats = yield* api.landingPages.stats({ params: { pageId: page.id }, query: { days: 1 } })
        expect(stats).toMatchObject({ views: 4, uniqueVisitors: 2 })
      }))
  })
})

/** A running test server's services, for requests through one process or the other. */
type Server = Context.Context<Layer.Success<ReturnType<typeof testServer<StorageServices, unknown>>>>

describe.each(postgresUrl === undefined ? [] : ["postgres"])("landing pages across processes on %s", () => {
  it.effect("a publish, edit, unpublish or delete through one server shows at once there, and on the other within the stale revision's age", () =>
    Effect.gen(function*() {
      const [first, second]: ReadonlyArray<Server> = yield* serversSharingPostgres({})
      const tenant = yield* Effect.provideContext(seedTenant("shared"), first!)
      const through = (server: Server, path: string) => Effect.provideContext(view(path), server)
      /** What `server` serves at `path` once it serves what `shows` accepts, asked until the stale revision's age is well past. */
      const shown = (server: Server, path: string, shows: (response: RawResponse) => boolean) =>
        Effect.gen(function*() {
          const deadline = Date.now() + staleRevisionMillis + 1_000
          let response = yield* through(server, path)
          while (!shows(response) && Date.now() < deadline) {
            yield* wallClockPause(20)
            response = yield* through(server, path)
          }
          return response
        })
      const showing = (html: string) => (response: RawResponse) => response.text.includes(html)
      const missing = (response: RawResponse) => response.status === 404
      const { api, page, path } = yield* Effect.provideContext(publishedPage(tenant, "offer", "<p>one</p>"), first!)
      expect((yield* through(second!, path)).text).toContain("<p>one</p>")

      yield* Effect.provideContext(
        api.landingPages.update({ params: { pageId: page.id }, payload: { bodyDocument: { html: "<p>two</p>" } } }),
        first!
      )
      expect((yield* through(first!, path)).text).toContain("<p>two</p>")
      expect((yield* shown(second!, path, showing("<p>two</p>"))).text).toContain("<p>two</p>")

      yield* Effect.provideContext(api.landingPages.unpublish({ params: { pageId: page.id }, payload: null }), first!)
      expectErrorResponse(yield* through(first!, path), 404)
      expectErrorResponse(yield* shown(second!, path, missing), 404)

      yield* Effect.provideContext(api.landingPages.publish({ params: { pageId: page.id }, payload: null }), first!)
      expect((yield* shown(second!, path, showing("<p>two</p>"))).text).toContain("<p>two</p>")
      // The other way round: a change through the second server shows on the first.
      yield* Effect.provideContext(
        Effect.flatMap(client({ apiKey: tenant.apiKey }), (other) =>
          other.landingPages.update({ params: { pageId: page.id }, payload: { bodyDocument: { html: "<p>three</p>" } } })),
        second!
      )
      expect((yield* through(second!, path)).text).toContain("<p>three</p>")
      expect((yield* shown(first!, path, showing("<p>three</p>"))).text).toContain("<p>three</p>")

      yield* Effect.provideContext(api.landingPages.delete({ params: { pageId: page.id } }), first!)
      expectErrorResponse(yield* through(first!, path), 404)
      expectErrorResponse(yield* shown(second!, path, missing), 404)
    }))
})
