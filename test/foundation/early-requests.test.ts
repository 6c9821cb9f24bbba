import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { AddressInfo } from "node:net"
import { hardenedServer } from "../../src/http/NodeServer.ts"
import { defaults } from "../../src/platform/AppConfig.ts"

// The platform's server listens before the service attaches its handler (NodeHttpServer's `make`, then `serve`).
it.effect("answers a request that arrived before the handler was attached", () =>
  Effect.gen(function*() {
    const server = hardenedServer(defaults)
    yield* Effect.addFinalizer(() => Effect.promise(() => new Promise<void>((done) => server.close(() => done()))))
    const port = yield* Effect.promise(() =>
      new Promise<number>((listening) => server.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port)))
    )
    const arrived = new Promise<void>((done) => server.once("connection", () => done()))
    const answer = fetch(`http://127.0.0.1:${port}/early`).then(async (response) => [response.status, await response.text()])
    yield* Effect.promise(() => arrived)
    // Let Node parse the request and emit it while nothing but the holding listener is attached.
    yield* Effect.promise(() => new Promise((done) => setTimeout(done, 50)))
    server.on("request", (request, response) => response.end(`handled ${request.url}`))
    expect(yield* Effect.promise(() => answer)).toEqual([200, "handled /early"])
    server.closeAllConnections()
  }).pipe(Effect.scoped))
