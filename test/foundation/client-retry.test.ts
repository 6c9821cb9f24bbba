import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeClient } from "../../src/client.ts"

/** What the stub answers with 200: a masked company key, as `GET /api_keys` does. */
const found = { apiKey: "plk_…stub" }

/**
 * A stub of the API that answers each request with the next status of the
 * script (the last one repeats) and counts the requests it gets.
 */
const stubServer = (script: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly attempts: () => number; readonly close: () => Promise<void> }>((resolve) => {
        let attempts = 0
        const server = createServer((_request, response) => {
          const status = script[Math.min(attempts, script.length - 1)]
          attempts++
          response.writeHead(status, { "content-type": "application/json" })
          response.end(JSON.stringify(status === 200 ? found : { error: `Scripted ${status}` }))
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            attempts: () => attempts,
            close: () => new Promise((closed) => server.close(() => closed()))
          }))
      })
    ),
    (stub) => Effect.promise(stub.close)
  )

/** Calls GET /api_keys (which declares every error status) through the exported client against a stub; answers the outcome and the request count. */
const callThrough = (script: ReadonlyArray<number>, retries?: number) =>
  Effect.gen(function*() {
    const stub = yield* stubServer(script)
    const api = yield* makeClient({ baseUrl: stub.url, apiKey: "plk_stub", retries, initialDelay: "1 millis" })
    const outcome = yield* Effect.match(api.apiKeys.get({ query: {} }), {
      onSuccess: (value) => value.apiKey,
      onFailure: (error) => error._tag
    })
    return { outcome, attempts: stub.attempts() }
  }).pipe(Effect.provide(FetchHttpClient.layer))

describe("the exported typed client's retry policy", () => {
  it.live("retries 429 and 500 with backoff, up to its retry count", () =>
    Effect.gen(function*() {
      expect(yield* callThrough([429], 3)).toEqual({ outcome: "RateLimited", attempts: 4 })
      expect(yield* callThrough([500], 2)).toEqual({ outcome: "InternalError", attempts: 3 })
      expect(yield* callThrough([500])).toEqual({ outcome: "InternalError", attempts: 5 })
    }))

  it.live("succeeds when a retry does", () =>
    Effect.gen(function*() {
      expect(yield* callThrough([429, 500, 200], 3)).toEqual({ outcome: found.apiKey, attempts: 3 })
    }))

  it.live("never retries 400, 401, 403 or 404", () =>
    Effect.gen(function*() {
      const expected = { 400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound" } as const
      for (const [status, tag] of Object.entries(expected)) {
        expect(yield* callThrough([Number(status), 200], 3)).toEqual({ outcome: tag, attempts: 1 })
      }
    }))
})
