import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { postJson, streamChat } from "../../support/DesignChatClient.ts"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { pgliteStorage, seedTenant } from "../../support/TestServer.ts"

/** The landing page design chat: the shared design chat over a page, each edit a version served at once. */

const bodyDocument = { html: "<main><h1>Old headline</h1><form><input name=\"email\"></form></main>", css: "h1{margin:0}" }

it.layer(loopbackServer(pgliteStorage), { excludeTestServices: true })("landing page design chat", (it) => {
  it.effect("an edit is saved as a chat version, announced by files_changed and served by the published page", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("pagechat")
      const base = yield* serverUrl
      const created = yield* Effect.promise(() =>
        postJson(base, tenant.apiKey, "/api/v0/landing-pages", { name: "Chat", slug: "chat", bodyDocument, status: "published" }))
      expect(created.status).toBe(201)
      const answer = yield* Effect.promise(() =>
        streamChat(base, tenant.apiKey, `/api/v0/landing-pages/${created.body.id}/chat`, {
          message: "Change the headline to \"Spring sale\"",
          bodyDocument
        }))
      expect(answer.events.map((event) => event.event).filter((kind) => kind !== "text"))
        .toEqual(["tool_call", "tool_result", "files_changed", "done"])
      const changed = answer.events.find((event) => event.event === "files_changed")!.data
      expect(changed.version).toBe(2)
      expect(changed.bodyDocument).toEqual({ ...bodyDocument, html: bodyDocument.html.replace("Old headline", "Spring sale") })

      const versions = yield* Effect.promise(() =>
        fetch(`${base}/api/v0/landing-pages/${created.body.id}/versions`, { headers: { "x-api-key": tenant.apiKey } })
          .then((response) => response.json() as Promise<any>))
      expect(versions.items.map((item: any) => item.source)).toEqual(["chat", "api"])
      const served = yield* Effect.promise(() => fetch(`${base}${new URL(created.body.url as string).pathname}`).then((response) => response.text()))
      expect(served).toContain("<h1>Spring sale</h1>")

      const other = yield* seedTenant("pagechat-other")
      const foreign = yield* Effect.promise(() =>
        streamChat(base, other.apiKey, `/api/v0/landing-pages/${created.body.id}/chat`, { message: "hi", bodyDocument }))
      expect(foreign.status).toBe(404)
    }))
})
