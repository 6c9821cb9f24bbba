import { describe, expect, it } from "@effect/vitest"
import { Channel, Effect, Stream } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { createRequire } from "node:module"
import { setFlagsFromString } from "node:v8"

// V8 allocates a function literal assigned straight to a property (`self.f = () => …`) in the old
// generation; the request it closes over then outlives every scavenge until a full collection.
// `patches/` (applied by `npm install`) moves the ones on every request's path into a local first.
// These tests fail when an upgrade of Effect or undici drops one of those patches.
setFlagsFromString("--allow-natives-syntax")
const inYoungGeneration = new Function("value", "return %InYoungGeneration(value)") as (value: unknown) => boolean

interface UndiciRequestHandler {
  readonly abort: unknown
  onRequestStart(controller: { abort(reason: unknown): void }, context: unknown): void
}
const { RequestHandler } = createRequire(import.meta.url)("undici/lib/api/api-request.js") as {
  RequestHandler: new(options: object, callback: () => void) => UndiciRequestHandler
}

describe("closures made for every request are young", () => {
  it("a control: a literal assigned to a property is old, one assigned through a local is young", () => {
    const self: { f?: () => number } = {}
    self.f = () => 1
    expect(inYoungGeneration(self.f)).toBe(false)
    const f = () => 1
    self.f = f
    expect(inYoungGeneration(self.f)).toBe(true)
  })

  it("Effect's Channel.fromTransform keeps its transform young", () => {
    const channel = Channel.fromTransform(() => Effect.succeed(Effect.never))
    expect(inYoungGeneration((channel as unknown as { transform: unknown }).transform)).toBe(true)
  })

  it("Effect's HttpClient.makeWith keeps its execute young", () => {
    const client = HttpClient.makeWith((request) => Effect.die(request), Effect.succeed)
    expect(inYoungGeneration(client.execute)).toBe(true)
  })

  it("undici's request handler keeps its abort young", () => {
    const handler = new RequestHandler({ method: "GET", path: "/" }, () => {})
    handler.onRequestStart({ abort: () => {} }, {})
    expect(inYoungGeneration(handler.abort)).toBe(true)
  })
})

describe("a response body read to its end is not aborted", () => {
  // The patched `stream` of Effect's client response: aborting after the last byte only built a
  // DOMException whose captured stack kept the request alive; leaving early must still cancel it.
  const clientRecordingSignals = (signals: Array<AbortSignal>) =>
    HttpClient.make((request, _url, signal) =>
      Effect.sync(() => {
        signals.push(signal)
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const part of ["data: a\n\n", "data: b\n\n"]) controller.enqueue(new TextEncoder().encode(part))
            controller.close()
          }
        })
        return HttpClientResponse.fromWeb(request, new Response(body))
      })
    )

  it.effect("read to its end: the request's signal stays unaborted", () =>
    Effect.gen(function*() {
      const signals: Array<AbortSignal> = []
      const response = yield* clientRecordingSignals(signals).execute(HttpClientRequest.get("http://upstream.test/"))
      const chunks = yield* Stream.runCollect(response.stream)
      expect(new TextDecoder().decode(Buffer.concat(chunks))).toBe("data: a\n\ndata: b\n\n")
      expect(signals.map((signal) => signal.aborted)).toEqual([false])
    }))

  it.effect("left after its first chunk: the request is aborted", () =>
    Effect.gen(function*() {
      const signals: Array<AbortSignal> = []
      const response = yield* clientRecordingSignals(signals).execute(HttpClientRequest.get("http://upstream.test/"))
      yield* Stream.runCollect(Stream.take(response.stream, 1))
      expect(signals.map((signal) => signal.aborted)).toEqual([true])
    }))
})
