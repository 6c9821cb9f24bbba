import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { failsWith } from "../support/Assertions.ts"
import { expectErrorResponse, getWithKey, postJson, send } from "../support/Http.ts"
import { client, pgliteStorage, postgresUrl, seedTenant, serversSharingPostgres, testServer } from "../support/TestServer.ts"

const limit = 3

it.layer(testServer(pgliteStorage, { rateLimitPerMinute: limit }))("rate limiting in one process", (it) => {
  it.effect("each response tells the limit; past it the next request gets 429 {error} with Retry-After", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      for (let used = 1; used <= limit; used++) {
        const [, response] = yield* api.me.get({ responseMode: "decoded-and-response" })
        expect(response.headers["ratelimit-limit"]).toBe(String(limit))
        expect(response.headers["ratelimit-remaining"]).toBe(String(limit - used))
        expect(Number(response.headers["ratelimit-reset"])).toBeGreaterThan(0)
      }
      yield* failsWith(api.me.get(), "RateLimited", /Rate limit exceeded/)
      const response = yield* send(getWithKey("/api/v0/me", tenant.apiKey))
      expectErrorResponse(response, 429, /Rate limit exceeded/)
      expect(Number(response.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      expect(Number(response.headers["retry-after"])).toBeLessThanOrEqual(60 / limit)
      expect(response.headers["ratelimit-limit"]).toBe(String(limit))
      expect(response.headers["ratelimit-remaining"]).toBe("0")
      expect(Number(response.headers["ratelimit-reset"])).toBeGreaterThan(0)
    }))

  it.effect("an MCP action is one request, over either MCP route and with either kind of key: the operation takes no second token", () =>
    Effect.gen(function*() {
      const arguments_ = { operationId: "me_get" }
      const routes = {
        toolsCall: (apiKey: string) => postJson("/api/v0/mcp/tools/call", { name: "platform_execute_action", arguments: arguments_ }, apiKey),
        jsonRpc: (apiKey: string) =>
          postJson("/api/v0/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "platform_execute_action", arguments: arguments_ } }, apiKey)
      }
      for (const route of [routes.toolsCall, routes.jsonRpc]) {
        for (const kind of ["company", "personal"] as const) {
          const tenant = yield* seedTenant(`mcp-${kind}`)
          const action = kind === "company"
            ? route(tenant.apiKey)
            : HttpClientRequest.setHeader(route(tenant.personalAccessKey), "x-company-id", tenant.companyId)
          for (let used = 1; used <= limit; used++) {
            const response = yield* send(action)
            expect(response.status).toBe(200)
            expect(JSON.stringify(response.body)).toContain(tenant.companyId)
            expect(JSON.stringify(response.body)).not.toContain("isError")
            expect(response.headers["ratelimit-remaining"]).toBe(String(limit - used))
          }
          expectErrorResponse(yield* send(action), 429, /Rate limit exceeded/)
        }
      }
    }))

  it.effect("the bucket belongs to the credential, whichever header carries it; other credentials keep theirs", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const viaHeader = yield* client({ apiKey: tenant.apiKey })
      const viaBearer = yield* client({ apiKey: tenant.apiKey, scheme: "bearer" })
      yield* viaHeader.me.get()
      yield* viaBearer.me.get()
      yield* viaHeader.me.get()
      yield* failsWith(viaBearer.me.get(), "RateLimited")
      const personal = yield* client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId })
      expect((yield* personal.me.get()).userId).toBe(tenant.userId)
      const otherTenant = yield* seedTenant("other")
      const other = yield* client({ apiKey: otherTenant.apiKey })
      expect((yield* other.me.get()).companyId).toBe(otherTenant.companyId)
    }))
})

/** The shared-store case needs PostgreSQL; without TEST_DATABASE_URL it is left out (test/support prints the notice). */
const sharedStores = postgresUrl === undefined ? [] : ["postgres"]

describe.each(sharedStores)("rate limiting across processes on %s", () => {
  it.effect("two servers over one database share each credential's bucket", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({ rateLimitPerMinute: limit })
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const viaFirst = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      const viaSecond = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), second)
      yield* viaFirst.me.get()
      const [, response] = yield* viaSecond.me.get({ responseMode: "decoded-and-response" })
      expect(response.headers["ratelimit-remaining"]).toBe(String(limit - 2))
      yield* viaFirst.me.get()
      yield* failsWith(viaSecond.me.get(), "RateLimited")
      yield* failsWith(viaFirst.me.get(), "RateLimited")
      const other = yield* Effect.provideContext(client({ apiKey: tenant.personalAccessKey, companyId: tenant.companyId }), second)
      expect((yield* other.me.get()).userId).toBe(tenant.userId)
    }))

  it.effect("each process takes tokens from the shared bucket in blocks of 1% of the capacity and spends them in memory", () =>
    Effect.gen(function*() {
      const [first, second] = yield* serversSharingPostgres({ rateLimitPerMinute: 300 })
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const viaFirst = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      const viaSecond = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), second)
      /** The shared bucket's last update: how many tokens it handed out, and when. */
      const lastTake = Effect.provideContext(
        SqlClient.SqlClient.use((sql) =>
          sql<{ readonly taken: number; readonly at: string }>`
            SELECT taken, updated_at::text AS at FROM rate_limit_buckets ORDER BY updated_at DESC LIMIT 1`),
        first
      ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)
      yield* viaFirst.me.get()
      const block = yield* lastTake
      expect(block.taken).toBe(3)
      // The block's other two tokens are spent in memory: the shared bucket is not written.
      yield* viaFirst.me.get()
      yield* viaFirst.me.get()
      expect(yield* lastTake).toEqual(block)
      yield* viaSecond.me.get()
      const secondTake = yield* lastTake
      expect(secondTake.at).not.toBe(block.at)
      // The first process's block is spent: its next request takes another one.
      yield* viaFirst.me.get()
      expect((yield* lastTake).at).not.toBe(secondTake.at)
    }))

  it.effect("a burst of requests from a fresh bucket takes one block, not one each", () =>
    Effect.gen(function*() {
      const [first] = yield* serversSharingPostgres({ rateLimitPerMinute: 3_000 })
      const tenant = yield* Effect.provideContext(seedTenant(), first)
      const api = yield* Effect.provideContext(client({ apiKey: tenant.apiKey }), first)
      yield* Effect.all(Array.from({ length: 20 }, () => api.me.get()), { concurrency: "unbounded" })
      const [bucket] = yield* Effect.provideContext(
        SqlClient.SqlClient.use((sql) => sql<{ readonly tokens: number }>`SELECT tokens FROM rate_limit_buckets ORDER BY updated_at DESC LIMIT 1`),
        first
      ).pipe(Effect.orDie)
      // One block is 30 tokens; twenty takes would have handed out 600. Refilling only adds tokens.
      expect(Number(bucket.tokens)).toBeGreaterThanOrEqual(3_000 - 30)
    }))
})
