import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { postJson, streamChat } from "../../support/DesignChatClient.ts"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { pgliteStorage, seedTenant } from "../../support/TestServer.ts"

/** Without any model provider: the offline `local` model turns simple instructions into the matching tool call. */

const bodyDocument = { html: "<html><body><h1>Old headline</h1><p>Hi {{firstName}}</p></body></html>" }

it.layer(loopbackServer(pgliteStorage), { excludeTestServices: true })("design chat offline", (it) => {
  it.effect("\"change the headline to …\" edits the h1, saves version 2 and ends with done", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("offline")
      const base = yield* serverUrl
      const created = yield* Effect.promise(() =>
        postJson(base, tenant.apiKey, "/api/v0/marketing-campaigns", { name: "Offline", subject: "Hello", bodyDocument }))
      const path = `/api/v0/marketing-campaigns/${created.body.id}/chat`
      const answer = yield* Effect.promise(() =>
        streamChat(base, tenant.apiKey, path, { message: "Change the headline to \"Spring sale\"", bodyDocument }))
      const kinds = answer.events.map((event) => event.event)
      expect(kinds.filter((kind) => kind !== "text")).toEqual(["tool_call", "tool_result", "files_changed", "done"])
      expect(answer.events[0]!.data).toMatchObject({ name: "set_text", arguments: { selector: "h1", text: "Spring sale" } })
      const changed = answer.events.find((event) => event.event === "files_changed")!.data
      expect(changed.version).toBe(2)
      expect(changed.bodyDocument.html).toBe("<html><body><h1>Spring sale</h1><p>Hi {{firstName}}</p></body></html>")
      expect(answer.events.at(-1)!.data.version).toBe(2)
      expect(answer.events.at(-1)!.data.usage.inputTokens).toBeGreaterThan(0)

      const subject = yield* Effect.promise(() =>
        streamChat(base, tenant.apiKey, path, { message: "set the subject to Big news", bodyDocument: changed.bodyDocument }))
      expect(subject.events.map((event) => event.event).filter((kind) => kind !== "text")).toEqual(["tool_call", "tool_result", "done"])
      const campaign = yield* Effect.promise(() =>
        fetch(`${base}/api/v0/marketing-campaigns/${created.body.id}`, { headers: { "x-api-key": tenant.apiKey } })
          .then((response) => response.json() as Promise<any>))
      expect(campaign.subject).toBe("Big news")
      expect(campaign.bodyVersion).toBe(2)
    }))
})
