import { expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { pgliteStorage, client, seedTenant, testServer } from "../../support/TestServer.ts"

/** Without any model provider: the offline `local` model turns a simple instruction into the matching edit. */

it.layer(testServer(pgliteStorage))("canvas chat offline", (it) => {
  it.effect("\"change the headline to …\" edits the canvas's h1 as version 2; anything else gets an answer without edits", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("canvas-offline")
      const api = yield* client({ apiKey: tenant.apiKey })
      const canvas = yield* api.canvases.create({ payload: { title: "Card", html: "<main><h1>Old</h1><p>Tag</p></main>" } })
      const thread = yield* api.canvases.createThread({ params: { canvas_id: canvas.id }, payload: { title: "T" } })
      const params = { canvas_id: canvas.id, thread_id: thread.id }
      const say = (message: string) =>
        api.canvases.chat({ params, payload: { message } }).pipe(
          Effect.flatMap(Stream.runCollect),
          Effect.map((events) => Array.from(events, (event) => ({ event: event.event, data: JSON.parse(event.data) })))
        )
      const edited = yield* say("Change the headline to \"Spring sale\"")
      expect(edited.map((event) => event.event).filter((kind) => kind !== "text")).toEqual(["tool_call", "tool_result", "files_changed", "done"])
      expect(edited[0]!.data).toMatchObject({ name: "set_text", arguments: { selector: "h1", text: "Spring sale" } })
      expect(edited.find((event) => event.event === "files_changed")!.data).toEqual({
        version: 2,
        html: "<main><h1>Spring sale</h1><p>Tag</p></main>"
      })
      expect((yield* api.canvases.get({ params: { canvas_id: canvas.id } })).htmlVersion).toBe(2)
      const chatted = yield* say("What do you think of it?")
      expect(chatted.map((event) => event.event).filter((kind) => kind !== "text")).toEqual(["done"])
      expect(chatted.at(-1)!.data.version).toBe(2)
      expect((yield* api.canvases.listMessages({ params, query: {} })).total).toBe(4)
    }))
})
