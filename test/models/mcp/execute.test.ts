import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import type { Operation } from "../../../src/models/mcp/Catalog.ts"
import { makeExecutor, maxStreamEvents, planRequest } from "../../../src/models/mcp/Execute.ts"

/** An operation as the catalog would describe it, with only what execution reads. */
const operation = (overrides: Partial<Operation>): Operation => ({
  operationId: "things_do",
  category: "things",
  method: "GET",
  path: "/things",
  summary: "",
  description: "",
  readOnly: true,
  pathParameters: [],
  queryParameters: [],
  body: undefined,
  multipart: false,
  response: { status: 200, contentTypes: ["application/json"], schema: {} },
  errors: [],
  keywords: new Map(),
  ...overrides
})

const parameter = (name: string) => ({ name, required: true, schema: { type: "string" } })

describe("planning an operation's request from flat arguments", () => {
  it("encodes path parameters, repeats array query values, sends the rest as the body", () => {
    const update = operation({
      method: "PATCH",
      path: "/things/{thingId}/parts/{partId}",
      pathParameters: [parameter("thingId"), parameter("partId")],
      queryParameters: [{ ...parameter("tag"), required: false }],
      body: { schema: {}, fields: ["name", "partId"] }
    })
    const planned = planRequest(update, { thingId: "a/b?c#d", partId: 7, tag: ["x y", true], name: "New", extra: 1 })
    expect(Result.getOrThrow(planned)).toEqual({
      url: "/things/a%2Fb%3Fc%23d/parts/7?tag=x+y&tag=true",
      body: { partId: 7, name: "New", extra: 1 }
    })
  })

  it("refuses what cannot make a request, naming the argument", () => {
    const get = operation({ path: "/things/{thingId}", pathParameters: [parameter("thingId")], queryParameters: [{ ...parameter("page"), required: false }] })
    const failure = (args: Record<string, unknown>) => Result.getOrElse(Result.flip(planRequest(get, args)), () => "planned")
    expect(failure({})).toMatch(/Missing required argument "thingId"/)
    expect(failure({ thingId: { nested: true } })).toMatch(/"thingId" must be a string/)
    expect(failure({ thingId: ".." })).toMatch(/must be an id/)
    expect(failure({ thingId: "" })).toMatch(/must be an id/)
    expect(failure({ thingId: "t", page: { n: 1 } })).toMatch(/"page" must be a string, number or boolean/)
    expect(failure({ thingId: "t", color: "red" })).toBe("Unknown argument \"color\" for things_do: it takes thingId, page")
  })
})

describe("executing through a router", () => {
  const encoder = new TextEncoder()

  it.effect("collects a stream's events up to the limit and stops reading there", () =>
    Effect.gen(function*() {
      const router = yield* HttpRouter.make
      let produced = 0
      const events = Stream.range(1, 50_000).pipe(
        Stream.map((n) => {
          produced++
          return encoder.encode(n === 1 ? "event: start\ndata: {\"n\":1}\n\n" : `data: ${n === 2 ? "plain text" : `{"n":${n}}`}\n\n`)
        })
      )
      yield* router.add("GET", "/events", HttpServerResponse.stream(events, { contentType: "text/event-stream" }))
      const result = yield* makeExecutor(router)(operation({ path: "/events" }), {}, {})
      const collected = result.structuredContent as { status: number; truncated: boolean; events: Array<unknown> }
      expect([collected.status, collected.truncated, collected.events.length]).toEqual([200, true, maxStreamEvents])
      expect(collected.events.slice(0, 3)).toEqual([
        { event: "start", data: { n: 1 } },
        { event: "message", data: "plain text" },
        { event: "message", data: { n: 3 } }
      ])
      expect(produced).toBeLessThan(50_000)
    }))

  it.effect("refuses answers MCP cannot carry, and wraps a non-object JSON answer", () =>
    Effect.gen(function*() {
      const router = yield* HttpRouter.make
      yield* router.add("GET", "/image", HttpServerResponse.uint8Array(new Uint8Array([137, 80, 78, 71]), { contentType: "image/png" }))
      yield* router.add("GET", "/list", HttpServerResponse.jsonUnsafe([1, 2]))
      const execute = makeExecutor(router)
      const image = yield* execute(operation({ path: "/image" }), {}, {})
      expect(image).toMatchObject({ isError: true, structuredContent: { status: 400, error: expect.stringMatching(/image\/png/) } })
      const list = yield* execute(operation({ path: "/list" }), {}, {})
      expect(list).toEqual({ content: [{ type: "text", text: "[1,2]" }], structuredContent: { result: [1, 2] } })
    }))
})
