import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import type { SettingOverrides } from "../../../src/app/Settings.ts"
import { spend } from "../../support/Billing.ts"
import { type ChatEvent, postJson, streamChat } from "../../support/DesignChatClient.ts"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { type ScriptedTurn, type ScriptedUpstream, scriptedTurnUsage, startScriptedUpstream } from "../../support/ScriptedUpstream.ts"
import { backends, seedTenant, type Tenant } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * The design chats end to end: the service on a loopback port, a scripted
 * model provider (OpenAI-compatible or Anthropic-shaped) playing a
 * multi-round tool conversation, the events read with a real SSE parser.
 */

class Upstream extends Context.Service<Upstream, ScriptedUpstream>()("test/DesignUpstream") {}

/** One credit per token, so that a charge reads as a token count. */
const perToken = { inputCreditsPerMillion: 1_000_000, outputCreditsPerMillion: 1_000_000, maxOutputTokens: 1_000 }

const maxRounds = 4

const serverOver = <A, E>(storage: Layer.Layer<A, E>, model: "designer" | "designer-anthropic", extra: SettingOverrides = {}) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(storage, {
      llmModels: Option.some([
        { id: "designer", provider: "openai", upstream: "scripted", ...perToken },
        { id: "designer-anthropic", provider: "anthropic", upstream: "scripted", ...perToken }
      ]),
      openaiBaseUrl: Option.some(stub.openaiUrl),
      openaiApiKey: Option.some(Redacted.make("test")),
      anthropicBaseUrl: Option.some(stub.anthropicUrl),
      anthropicApiKey: Option.some(Redacted.make("test")),
      llmMaxRetries: 0,
      ...extra,
      design: { model, maxRounds, ...extra.design }
    })
  )).pipe(Layer.provideMerge(Layer.effect(
    Upstream,
    Effect.acquireRelease(Effect.promise(() => startScriptedUpstream()), (stub) => Effect.promise(stub.close))
  )))

const startHtml =
  `<html><body><table role="presentation"><tr><td><h1>Old headline</h1><p class="intro">Hi {{firstName}}, {Hello|Hi} there</p><a href="https://example.com/old" style="color:#fff">Buy</a></td></tr></table></body></html>`

const bodyDocument = { html: startHtml, css: "", components: [] }

const play = (script: ReadonlyArray<ScriptedTurn>) => Upstream.useSync((stub) => stub.play(script))

/** A tenant, its key, the server's URL and a fresh draft campaign (body version 1). */
const setup = Effect.gen(function*() {
  const tenant = yield* seedTenant("design")
  const base = yield* serverUrl
  const created = yield* Effect.promise(() =>
    postJson(base, tenant.apiKey, "/api/v0/marketing-campaigns", { name: "Spring", subject: "Hello", bodyDocument }))
  expect(created.status).toBe(201)
  return { tenant, base, campaignId: created.body.id }
})

const chat = (base: string, apiKey: string, campaignId: string, body: unknown, leaveAfter?: (event: ChatEvent) => boolean) =>
  Effect.promise(() => streamChat(base, apiKey, `/api/v0/marketing-campaigns/${campaignId}/chat`, body, { leaveAfter }))

const versions = (base: string, apiKey: string, campaignId: string) =>
  Effect.promise(async () => {
    const page = await fetch(`${base}/api/v0/marketing-campaigns/${campaignId}/versions?pageSize=100`, { headers: { "x-api-key": apiKey } })
    return ((await page.json()) as { readonly items: Array<{ version: number; source: string }> }).items
  })

const getCampaign = (base: string, apiKey: string, campaignId: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/api/v0/marketing-campaigns/${campaignId}`, { headers: { "x-api-key": apiKey } })
    return (await response.json()) as { readonly bodyVersion: number; readonly bodyDocument: { readonly html: string } }
  })

const campaignCharges = (tenant: Tenant) =>
  usageHistory(tenant.organizationId, { featureKey: "campaigns" }).pipe(
    Effect.map((page) => page.events)
  )

/** The charges once `count` rounds have settled (a stream settles just after it ends). */
const settledCharges = (tenant: Tenant, count: number) =>
  campaignCharges(tenant).pipe(
    Effect.repeat({ until: (events) => events.length >= count, schedule: Schedule.spaced("20 millis"), times: 250 }),
    Effect.tap((events) => Effect.sync(() => expect(events).toHaveLength(count)))
  )

const names = (events: ReadonlyArray<ChatEvent>) => events.map((event) => event.event)

/** A conversation of three edits over three rounds, one of them failing first and corrected. */
const threeEdits: ReadonlyArray<ScriptedTurn> = [
  { text: "Let me update the headline.", toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Spring sale" } }] },
  { toolCalls: [{ name: "set_attribute", arguments: { selector: "a.missing", name: "href", value: "https://example.com/sale" } }] },
  {
    toolCalls: [
      { name: "set_attribute", arguments: { selector: "a", name: "href", value: "https://example.com/sale" } },
      { name: "set_preheader", arguments: { preheader: "Everything 20% off" } }
    ]
  },
  { text: "Done: new headline, link and preheader." }
]

for (const backend of backends) {
  it.layer(serverOver(backend.storage, "designer"), { excludeTestServices: true })(`campaign design chat on ${backend.name}`, (it) => {
    it.effect("streams text, tool calls and results, one files_changed per saved edit, versions in order, then done with the usage", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play(threeEdits)
        const answer = yield* chat(base, tenant.apiKey, campaignId, { message: "Make it a spring sale", bodyDocument })
        expect(answer.status).toBe(200)
        expect(answer.contentType).toContain("text/event-stream")
        const kinds = names(answer.events)
        expect(kinds.filter((kind) => kind !== "text")).toEqual([
          "tool_call", "tool_result", "files_changed",
          "tool_call", "tool_result",
          "tool_call", "tool_result", "files_changed",
          "tool_call", "tool_result", "files_changed",
          "done"
        ])
        expect(kinds[0]).toBe("text")
        expect(answer.events.filter((event) => event.event === "text").map((event) => event.data.delta).join(""))
          .toBe("Let me update the headline.Done: new headline, link and preheader.")
        const [firstCall, firstResult] = answer.events.filter((event) => event.event.startsWith("tool_"))
        expect(firstCall!.data).toEqual({ id: expect.any(String), name: "set_text", arguments: { selector: "h1", text: "Spring sale" } })
        expect(firstResult!.data).toEqual({ id: firstCall!.data.id, name: "set_text", result: { ok: true, matched: 1 } })
        const failed = answer.events.filter((event) => event.event === "tool_result")[1]!
        expect(failed.data.name).toBe("set_attribute")
        expect(failed.data.error).toContain("No element matches \"a.missing\"")
        const changes = answer.events.filter((event) => event.event === "files_changed").map((event) => event.data)
        expect(changes.map((change) => change.version)).toEqual([2, 3, 4])
        expect(changes[0].bodyDocument.html).toContain("<h1>Spring sale</h1>")
        expect(changes[0].bodyDocument.css).toBe("")
        expect(changes[1].bodyDocument.html).toContain("href=\"https://example.com/sale\"")
        expect(changes[1].bodyDocument.html).toContain("<h1>Spring sale</h1>")
        expect(changes[2].bodyDocument.html).toContain("data-preheader")
        expect(changes[2].bodyDocument.html).toContain("Hi {{firstName}}, {Hello|Hi} there")
        const done = answer.events.at(-1)!
        expect(done.data).toEqual({ version: 4, usage: { inputTokens: 4 * scriptedTurnUsage.input, outputTokens: 4 * scriptedTurnUsage.output } })

        const saved = yield* versions(base, tenant.apiKey, campaignId)
        expect(saved.map((version) => [version.version, version.source]).sort()).toEqual([[1, "api"], [2, "chat"], [3, "chat"], [4, "chat"]])
        const campaign = yield* getCampaign(base, tenant.apiKey, campaignId)
        expect(campaign.bodyVersion).toBe(4)
        expect(campaign.bodyDocument).toEqual(changes[2].bodyDocument)

        const charges = yield* settledCharges(tenant, 4)
        expect(charges.every((charge) => charge.credits === scriptedTurnUsage.input + scriptedTurnUsage.output)).toBe(true)

        const requests = yield* Upstream.useSync((stub) => stub.requests)
        expect(requests).toHaveLength(4)
        expect(requests[0].tools.map((tool: any) => tool.function.name)).toContain("replace_html")
        expect(requests[0].messages[0].role).toBe("system")
        expect(requests[0].messages[0].content).toContain("Merge fields such as")
        expect(requests[0].messages[0].content).toContain("<h1>Old headline</h1>")
        const secondRound = requests[1].messages
        expect(secondRound.at(-1)).toMatchObject({ role: "tool", content: JSON.stringify({ ok: true, matched: 1 }) })
      }))

    it.effect("the round limit ends the stream with error; edits made so far stay saved", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play([{ toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Again" } }] }])
        const answer = yield* chat(base, tenant.apiKey, campaignId, { message: "Loop", bodyDocument })
        const kinds = names(answer.events)
        expect(kinds.at(-1)).toBe("error")
        expect(answer.events.at(-1)!.data).toEqual({ error: `Stopped after ${maxRounds} tool rounds` })
        expect(kinds.filter((kind) => kind === "done" || kind === "error")).toHaveLength(1)
        expect(kinds.filter((kind) => kind === "files_changed")).toHaveLength(maxRounds - 1)
        expect(yield* Upstream.useSync((stub) => stub.requests.length)).toBe(maxRounds)
        expect((yield* getCampaign(base, tenant.apiKey, campaignId)).bodyVersion).toBe(maxRounds)
        yield* settledCharges(tenant, maxRounds)
      }))

    it.effect("a client that leaves mid-stream aborts the upstream call; saved edits stay, nothing half-saved, usage billed", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play([
          { toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Before leaving" } }] },
          { text: "Now I will also change the button and ", hang: true }
        ])
        const answer = yield* chat(
          base,
          tenant.apiKey,
          campaignId,
          { message: "Edit", bodyDocument },
          (event) => event.event === "text" && secondRoundText(event)
        )
        expect(names(answer.events)).toContain("files_changed")
        yield* Upstream.useSync((stub) => stub.abandoned()).pipe(
          Effect.repeat({ until: (count) => count >= 1, schedule: Schedule.spaced("20 millis"), times: 250 }),
          Effect.tap((count) => Effect.sync(() => expect(count).toBe(1)))
        )
        const charges = yield* settledCharges(tenant, 2)
        expect(charges.every((charge) => charge.credits > 0)).toBe(true)
        const saved = yield* versions(base, tenant.apiKey, campaignId)
        expect(saved.map((version) => version.version).sort()).toEqual([1, 2])
        expect((yield* getCampaign(base, tenant.apiKey, campaignId)).bodyDocument.html).toContain("<h1>Before leaving</h1>")
      }))

    it.effect("out of credits: 403 before the stream, no upstream call", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play(threeEdits)
        yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }, { feature: "setup", credits: 100_000 })
        const answer = yield* chat(base, tenant.apiKey, campaignId, { message: "Edit", bodyDocument })
        expect(answer.status).toBe(403)
        expect(answer.error).toEqual({ error: "Insufficient credits" })
        expect(yield* Upstream.useSync((stub) => stub.requests.length)).toBe(0)
      }))

    it.effect("errors before the stream: 404 other company's or unknown campaign, 400 bad input or a campaign already sending", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        const other = yield* seedTenant("design-other")
        yield* play(threeEdits)
        const ask = (id: string, body: unknown, key = tenant.apiKey) => chat(base, key, id, body)
        expect((yield* ask(campaignId, { message: "x", bodyDocument }, other.apiKey)).status).toBe(404)
        expect((yield* ask("nope", { message: "x", bodyDocument })).status).toBe(404)
        const missingMessage = yield* ask(campaignId, { bodyDocument })
        expect(missingMessage.status).toBe(400)
        expect(JSON.stringify(missingMessage.error)).toContain("message")
        const noHtml = yield* ask(campaignId, { message: "x", bodyDocument: { css: "" } })
        expect(noHtml.status).toBe(400)
        expect(JSON.stringify(noHtml.error)).toContain("html")
        const huge = yield* ask(campaignId, { message: "x", bodyDocument: { html: "x".repeat(1_000_001) } })
        expect(huge.status).toBe(400)
        expect((yield* ask(campaignId, { message: "   ", bodyDocument })).status).toBe(400)
        yield* Effect.promise(() => postJson(base, tenant.apiKey, "/api/v0/lists", { name: "L", rows: [{ email: "a@example.com" }] }))
          .pipe(Effect.flatMap((list) =>
            Effect.promise(() => postJson(base, tenant.apiKey, `/api/v0/marketing-campaigns/${campaignId}/send`, { listId: list.body.id }))))
        const sending = yield* ask(campaignId, { message: "x", bodyDocument })
        expect(sending.status).toBe(400)
        expect(yield* Upstream.useSync((stub) => stub.requests.length)).toBe(0)
      }))
  })
}

/** True for a text delta of the second (hanging) round. */
const secondRoundText = (event: ChatEvent) => typeof event.data.delta === "string" && event.data.delta.startsWith("Now")

describe("design chats on other wires", () => {
  it.layer(serverOver(backends[0]!.storage, "designer-anthropic"), { excludeTestServices: true })("Anthropic-shaped upstream", (it) => {
    it.effect("the same conversation over Anthropic's wire: tool_use blocks become tool calls and versions", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play(threeEdits)
        const answer = yield* chat(base, tenant.apiKey, campaignId, { message: "Spring", bodyDocument })
        expect(names(answer.events).filter((kind) => kind === "files_changed")).toHaveLength(3)
        expect(answer.events.at(-1)!.event).toBe("done")
        const requests = yield* Upstream.useSync((stub) => stub.requests)
        expect(requests[0].tools.map((tool: any) => tool.name)).toContain("set_text")
        expect(requests[1].messages.at(-1).content[0]).toMatchObject({ type: "tool_result" })
        expect(requests[2].messages.at(-1).content[0]).toMatchObject({ type: "tool_result", is_error: true })
      }))

    it.effect("the template chat sends attachments to the model as image parts", () =>
      Effect.gen(function*() {
        const { tenant, base } = yield* setup
        const template = yield* Effect.promise(() =>
          postJson(base, tenant.apiKey, "/api/v0/marketing-campaign-templates", { name: "T", bodyDocument }))
        const png = Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "base64"
        )
        const form = new FormData()
        form.append("file", new Blob([png], { type: "image/png" }), "ref.png")
        const uploaded = yield* Effect.promise(async () => {
          const response = await fetch(`${base}/api/v0/marketing-campaign-templates/${template.body.id}/upload`, {
            method: "POST",
            headers: { "x-api-key": tenant.apiKey },
            body: form
          })
          return (await response.json()) as { readonly id: string }
        })
        yield* play([
          { toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "Like the picture" } }] },
          { text: "Matched the reference." }
        ])
        const path = `/api/v0/marketing-campaign-templates/${template.body.id}/chat`
        const answer = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, path, { message: "Match this", bodyDocument, attachments: [uploaded.id] }))
        expect(names(answer.events).filter((kind) => kind !== "text")).toEqual(["tool_call", "tool_result", "files_changed", "done"])
        const first = (yield* Upstream.useSync((stub) => stub.requests))[0]
        const image = first.messages[0].content.find((part: any) => part.type === "image")
        expect(image).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } })
        const stored = yield* Effect.promise(() =>
          fetch(`${base}/api/v0/marketing-campaign-templates/${template.body.id}`, { headers: { "x-api-key": tenant.apiKey } })
            .then((response) => response.json() as Promise<any>))
        expect(stored.bodyDocument.html).toContain("<h1>Like the picture</h1>")
        expect(stored.bodyVersion).toBe(2)
        expect(answer.events.find((event) => event.event === "files_changed")!.data.version).toBe(2)
        expect(answer.events.at(-1)!.data.version).toBe(2)
        const unknown = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, path, { message: "x", bodyDocument, attachments: ["not-an-upload"] }))
        expect(unknown.status).toBe(400)
      }))
  })
})

describe("design chat wall-clock limit", () => {
  it.layer(serverOver(backends[0]!.storage, "designer", { design: { timeoutMs: 300 } }), { excludeTestServices: true })("short limit", (it) => {
    it.effect("a chat over its time limit ends with error and stops the upstream call; the edit before stays", () =>
      Effect.gen(function*() {
        const { tenant, base, campaignId } = yield* setup
        yield* play([
          { toolCalls: [{ name: "set_text", arguments: { selector: "h1", text: "In time" } }] },
          { text: "Still thinking", hang: true }
        ])
        const answer = yield* chat(base, tenant.apiKey, campaignId, { message: "Edit", bodyDocument })
        expect(names(answer.events).filter((kind) => kind !== "text")).toEqual(["tool_call", "tool_result", "files_changed", "error"])
        expect(answer.events.at(-1)!.data).toEqual({ error: "Stopped after the time limit of 300 ms" })
        yield* Upstream.useSync((stub) => stub.abandoned()).pipe(
          Effect.repeat({ until: (count) => count >= 1, schedule: Schedule.spaced("20 millis"), times: 250 }),
          Effect.tap((count) => Effect.sync(() => expect(count).toBe(1)))
        )
        expect((yield* getCampaign(base, tenant.apiKey, campaignId)).bodyVersion).toBe(2)
      }))
  })
})
