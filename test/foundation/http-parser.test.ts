import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exchange, firstReply, openConnection, parseResponse, serverPort, wallClockPause } from "../support/RawSocket.ts"
import { pgliteStorage, testServer } from "../support/TestServer.ts"

/**
 * What never reaches a handler: requests Node's HTTP parser refuses and clients
 * too slow to finish, over bare sockets, against small configured limits.
 */

const limits = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300 }

/** A 400 with exactly `{"error"}` (matching `message`), JSON, and a request id. */
const expectParserRefusal = (received: string, message: RegExp) => {
  const response = parseResponse(received)
  expect(response.status).toBe(400)
  expect(response.headers["content-type"]).toBe("application/json")
  expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{12}_[0-9a-z]+$/)
  const body = JSON.parse(response.body)
  expect(Object.keys(body)).toEqual(["error"])
  expect(body.error).toMatch(message)
}

const health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"

/** The same request, asking the server to close the connection once it answered. */
const healthThenClose = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

describe("the HTTP parser's refusals", () => {
  it.layer(testServer(pgliteStorage, limits))((it) => {
    it.effect("headers or a URL over the limit answer 400 {error} with X-Request-Id, not an empty 431", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const bigHeader = yield* exchange(port, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)
        expectParserRefusal(bigHeader.received, /too large/)
        const longUrl = yield* exchange(port, `GET /api/v0/projects/${"a".repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
        expectParserRefusal(longUrl.received, /too large/)
      }))

    it.effect("malformed framing answers 400 {error}: bare LF, Content-Length with Transfer-Encoding, bad chunk sizes", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const malformed = [
          "GET /health HTTP/1.1\nHost: localhost\n\n",
          "POST /api/v0/projects HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
          "POST /api/v0/projects HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
          "GET /health HTTP/9.9\r\nHost: localhost\r\n\r\n"
        ]
        for (const request of malformed) {
          expectParserRefusal((yield* exchange(port, request)).received, /^Malformed request/)
        }
      }))

    it.effect("a client that dribbles its headers (slowloris) is cut off with 400", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const slow = yield* exchange(port, "GET /health HTTP/1.1\r\nHost: localhost\r\n", {
          pieces: Array.from({ length: 200 }, (_, index) => `X-Slow-${index}: 1\r\n`),
          everyMs: 25
        })
        expect(slow.piecesSent).toBeLessThan(200)
        expectParserRefusal(slow.received, /too slowly/)
      }))

    it.effect("a client that dribbles its body is cut off", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const head = "POST /api/v0/projects HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        const slow = yield* exchange(port, head, { pieces: Array.from({ length: 200 }, () => " "), everyMs: 25 })
        expect(slow.piecesSent).toBeLessThan(200)
        expectParserRefusal(slow.received, /too slowly/)
      }))

    it.effect("a connection that sends nothing, or idles after a response, is closed", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const silent = yield* exchange(port, "", { pieces: Array.from({ length: 200 }, () => ""), everyMs: 25 })
        expect(silent.piecesSent).toBeLessThan(200)
        const idle = yield* exchange(port, health, { pieces: Array.from({ length: 200 }, () => ""), everyMs: 25 })
        expect(idle.piecesSent).toBeLessThan(200)
        expect(parseResponse(idle.received).status).toBe(200)
      }))
  })

  it.layer(testServer(pgliteStorage, { maxConnections: 3 }))((it) => {
    it.effect("connections beyond the cap are closed as they arrive; the service serves again once some close", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        yield* Effect.scoped(Effect.gen(function*() {
          for (let index = 0; index < 3; index++) {
            const socket = yield* openConnection(port)
            expect(parseResponse(yield* firstReply(socket, health)).status).toBe(200)
          }
          const refused = yield* exchange(port, healthThenClose)
          expect(refused.received).toBe("")
        }))
        // The server notices the closed connections on its own time (a plain loop: Effect's retry schedules run on TestClock here).
        let served = yield* exchange(port, healthThenClose)
        for (let attempt = 0; served.received === "" && attempt < 100; attempt++) {
          yield* wallClockPause(20)
          served = yield* exchange(port, healthThenClose)
        }
        expect(parseResponse(served.received).status).toBe(200)
      }))
  })
})
