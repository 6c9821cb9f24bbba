import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schedule, Stream } from "effect"
import { spend } from "../../support/Billing.ts"
import { type ChatEvent, streamChat } from "../../support/DesignChatClient.ts"
import { serverUrl } from "../../support/LoopbackServer.ts"
import { type ScriptedTurn, type ScriptedUpstream, scriptedTurnUsage, startScriptedUpstream } from "../../support/ScriptedUpstream.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, type Tenant, testServer } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * The canvas chat through the typed client: the service with a scripted
 * OpenAI-compatible model playing a tool conversation over the canvas's HTML,
 * the events decoded by the client's own SSE reader.
 */

class Upstream extends Context.Service<Upstream, ScriptedUpstream>()("test/CanvasUpstream") {}

/** One credit per token, so that a charge reads as a token count. */
const perToken = { inputCreditsPerMillion: 1_000_000, outputCreditsPerMillion: 1_000_000, maxOutputTokens: 1_000 }

const serverOver = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    testServer(storage, {
      llmModels: Option.some([{ id: "designer", provider: "openai", upstream: "scripted", ...perToken }]),
      openaiBaseUrl: Option.some(stub.openaiUrl),
      openaiApiKey: Option.some(Redacted.make("test")),
      llmMaxRetries: 0,
      design: { model: "designer", maxRounds: 4 }
    })
  )).pipe(Layer.provideMerge(Layer.effect(
    Upstream,
    Effect.acquireRelease(Effect.promise(() => startScriptedUpstream()), (stub) => Effect.promise(stub.close))
  )))

const startHtml = `<!doctype html><html><head><style>body{margin:0}</style></head><body><main><h1>Old headline</h1><p class="tag">Launch week</p></main></body></html>`

const play = (script: ReadonlyArray<ScriptedTurn>) => Upstream.useSync((stub) => stub.play(script))
const upstreamRequests = Upstream.useSync((stub) => stub.requests)

/** A tenant, its typed client, a canvas (version 1) and a thread on it. */
const setup = Effect.gen(function*() {
  const tenant = yield* seedTenant("canvas-chat")
  const api = yield* client({ apiKey: tenant.apiKey })
  const canvas = yield* api.canvases.create({ payload: { title: "Card", html: startHtml } })
  const thread = yield* api.canvases.createThread({ params: { canvas_id: canvas.id }, payload: { title: "Design" } })
  return { tenant, api, canvas, params: { canvas_id: canvas.id, thread_id: thread.id } }
})

type Api = Effect.Success<typeof setup>["api"]

/** Sends a message and reads every event, its data parsed. */
const chat = (api: Api, params: { canvas_id: string; thread_id: string }, message: string) =>
  api.canvases.chat({ params, payload: { message } }).pipe(
    Effect.flatMap(Stream.runCollect),
    Effect.map((events) => Array.from(events, (event): ChatEvent => ({ event: event.event, data: JSON.parse(event.data) })))
  )

const kinds = (events: ReadonlyArray<ChatEvent>) => events.map((event) => event.event).filter((kind) => kind !== "text")

/** The `content` charges once `count` rounds have settled (a stream settles just after it ends). */
const settledCharges = (tenant: Tenant, count: number) =>
  usageHistory(tenant.organizationId, { featureKey: "content" }).pipe(
    Effect.map((page) => page.events),
    Effect.repeat({ until: (events) => events.length >= count, schedule: Schedule.spaced("20 millis"), times: 250 }),
    Effect.tap((events) => Effect.sync(() => expect(events).toHaveLength(count)))
  )

const twoEdits: ReadonlyArray<ScriptedTurn> = [
  { text: "Updating the headline.", toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Spring sale" } }] },
  { toolCalls: [{ name: "set_attribute", arguments: { selector: "p.missing", name: "style", value: "color:red" } }] },
  { toolCalls: [{ name: "set_attribute", arguments: { selector: "p.tag", name: "style", value: "color:var(--brand-primary)" } }] },
  { text: "Done: new headline in the brand colour." }
]

for (const backend of backends) {
  it.layer(serverOver(backend.storage), { excludeTestServices: true })(`canvas chat on ${backend.name}`, (it) => {
    it.effect("edits the canvas through tools: a version per edit, files_changed, done; billed under content; the turn kept", () =>
      Effect.gen(function*() {
        const { tenant, api, canvas, params } = yield* setup
        yield* api.brandKit.put({ payload: { name: "Acme", colors: { primary: "#ff0000" } } })
        yield* play(twoEdits)
        const events = yield* chat(api, params, "Make it a spring sale")
        expect(kinds(events)).toEqual([
          "tool_call", "tool_result", "files_changed",
          "tool_call", "tool_result",
          "tool_call", "tool_result", "files_changed",
          "done"
        ])
        const failed = events.filter((event) => event.event === "tool_result")[1]!
        expect(failed.data.error).toContain("No element matches \"p.missing\"")
        const changes = events.filter((event) => event.event === "files_changed").map((event) => event.data)
        expect(changes.map((change) => change.version)).toEqual([2, 3])
        expect(changes[0].html).toContain("<h1>Spring sale</h1>")
        expect(changes[1].html).toContain("<p class=\"tag\" style=\"color:var(--brand-primary)\">Launch week</p>")
        expect(events.at(-1)!.data).toEqual({ version: 3, usage: { inputTokens: 4 * scriptedTurnUsage.input, outputTokens: 4 * scriptedTurnUsage.output } })

        const stored = yield* api.canvases.get({ params: { canvas_id: canvas.id } })
        expect(stored).toMatchObject({ html: changes[1].html, htmlVersion: 3 })
        const versions = yield* api.canvases.listVersions({ params: { canvas_id: canvas.id }, query: {} })
        expect(versions.items.map((version) => [version.version, version.source])).toEqual([[3, "chat"], [2, "chat"], [1, "api"]])

        const requests = yield* upstreamRequests
        const system = requests[0].messages[0].content as string
        expect(system).toContain("canvas editor")
        expect(system).toContain("<h1>Old headline</h1>")
        expect(system).toContain("You write for Acme")
        expect(system).toContain("--brand-primary:#ff0000")
        const tools = requests[0].tools.map((tool: any) => tool.function.name)
        expect(tools).toEqual(expect.arrayContaining(["read_document", "set_text", "replace_html", "insert_html"]))
        expect(tools).not.toContain("set_subject")
        expect(tools).not.toContain("set_preheader")

        const charges = yield* settledCharges(tenant, 4)
        expect(charges.every((charge) => charge.credits === scriptedTurnUsage.input + scriptedTurnUsage.output)).toBe(true)

        const messages = yield* api.canvases.listMessages({ params, query: {} })
        expect(messages.items.map((message) => [message.role, message.content])).toEqual([
          ["assistant", "Updating the headline.\n\nDone: new headline in the brand colour."],
          ["user", "Make it a spring sale"]
        ])

        yield* play([{ text: "It says Spring sale." }])
        const next = yield* chat(api, params, "What does the headline say?")
        expect(kinds(next)).toEqual(["done"])
        expect(next.at(-1)!.data.version).toBe(3)
        const second = (yield* upstreamRequests)[0]
        expect(second.messages[0].content).toContain("<h1>Spring sale</h1>")
        expect(second.messages.slice(1).map((message: any) => [message.role, message.content])).toEqual([
          ["user", "Make it a spring sale"],
          ["assistant", "Updating the headline.\n\nDone: new headline in the brand colour."],
          ["user", "What does the headline say?"]
        ])
      }))

    it.effect("a client that leaves mid-stream stops the model call; the saved edit stays, the rounds are billed", () =>
      Effect.gen(function*() {
        const { tenant, api, canvas, params } = yield* setup
        yield* play([
          { toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Before leaving" } }] },
          { text: "Now I will also change the tag and ", hang: true }
        ])
        const base = yield* serverUrl
        const path = `/api/v0/content/canvases/${params.canvas_id}/threads/${params.thread_id}/messages`
        const answer = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, path, { message: "Edit" }, {
            leaveAfter: (event) => event.event === "text" && String(event.data.delta).startsWith("Now")
          }))
        expect(kinds(answer.events)).toContain("files_changed")
        yield* Upstream.useSync((stub) => stub.abandoned()).pipe(
          Effect.repeat({ until: (count) => count >= 1, schedule: Schedule.spaced("20 millis"), times: 250 }),
          Effect.tap((count) => Effect.sync(() => expect(count).toBe(1)))
        )
        const charges = yield* settledCharges(tenant, 2)
        expect(charges.every((charge) => charge.credits > 0)).toBe(true)
        expect(yield* api.canvases.get({ params: { canvas_id: canvas.id } })).toMatchObject({ htmlVersion: 2 })
        expect((yield* api.canvases.get({ params: { canvas_id: canvas.id } })).html).toContain("<h1>Before leaving</h1>")
        expect((yield* api.canvases.listMessages({ params, query: {} })).total).toBe(0)
      }))

    it.effect("out of credits: 403 before the stream, no model call, nothing kept", () =>
      Effect.gen(function*() {
        const { tenant, api, params } = yield* setup
        yield* play(twoEdits)
        yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }, { feature: "setup", credits: 100_000 })
        const refused = yield* Effect.flip(chat(api, params, "Edit"))
        expect(refused).toMatchObject({ _tag: "Forbidden", error: "Insufficient credits" })
        expect((yield* upstreamRequests).length).toBe(0)
        expect((yield* api.canvases.listMessages({ params, query: {} })).total).toBe(0)
      }))

    it.effect("404 for another company's canvas or thread, a thread of another canvas, unknown ids; 400 for bad input; 403 for viewers", () =>
      Effect.gen(function*() {
        const { tenant, api, canvas, params } = yield* setup
        yield* play(twoEdits)
        const other = yield* seedTenant("canvas-chat-other")
        const theirs = yield* (yield* client({ apiKey: other.apiKey })).canvases.create({ payload: { title: "Theirs" } })
        const theirThread = yield* (yield* client({ apiKey: other.apiKey })).canvases.createThread({
          params: { canvas_id: theirs.id },
          payload: { title: "T" }
        })
        const mineToo = yield* api.canvases.create({ payload: { title: "Second" } })
        const notFound = [
          { canvas_id: theirs.id, thread_id: theirThread.id },
          { canvas_id: canvas.id, thread_id: theirThread.id },
          { canvas_id: mineToo.id, thread_id: params.thread_id },
          { canvas_id: "cnv_unknown", thread_id: params.thread_id },
          { canvas_id: canvas.id, thread_id: "cth_unknown" }
        ]
        for (const where of notFound) {
          expect((yield* Effect.flip(chat(api, where, "Edit")))._tag).toBe("NotFound")
          expect((yield* Effect.flip(api.canvases.listMessages({ params: where, query: {} })))._tag).toBe("NotFound")
        }
        const path = `/api/v0/content/canvases/${canvas.id}/threads/${params.thread_id}/messages`
        const bad = [[{}, "message"], [{ message: "   " }, "message"], [{ message: 7 }, "message"], [{ message: "x".repeat(20_001) }, "message"], [
          { message: "x", bodyDocument: {} },
          "bodyDocument"
        ]] as const
        for (const [body, field] of bad) expectErrorResponse(yield* send(requestWithKey("POST", path, tenant.apiKey, body)), 400, field)
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const viewing = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* Effect.flip(chat(viewing, params, "Edit")))._tag).toBe("Forbidden")
        expect((yield* viewing.canvases.listMessages({ params, query: {} })).total).toBe(0)
        expect((yield* upstreamRequests).length).toBe(0)
        expect(yield* (yield* client({ apiKey: other.apiKey })).canvases.get({ params: { canvas_id: theirs.id } }))
          .toMatchObject({ html: "", htmlVersion: 1 })
      }))
  })
}
