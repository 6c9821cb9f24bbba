import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeClient } from "../../../src/client.ts"
import { spend } from "../../support/Billing.ts"
import { streamChat } from "../../support/DesignChatClient.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { type ScriptedUpstream, scriptedTurnUsage, startScriptedUpstream } from "../../support/ScriptedUpstream.ts"
import { backends, client, seedTenant, type Tenant, testServer } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/**
 * The content engine: with a scripted OpenAI-compatible model (brand kit in
 * the prompt, the answer parsed per kind, billed under `content`, streamed as
 * server-sent events read with a real parser), and offline with only the
 * `local` models (templates, one per kind, no charge).
 */

class Upstream extends Context.Service<Upstream, ScriptedUpstream>()("test/ContentUpstream") {}

const perToken = { inputCreditsPerMillion: 1_000_000, outputCreditsPerMillion: 1_000_000, maxOutputTokens: 1_000 }

const withModel = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(storage, {
      llmModels: Option.some([{ id: "writer", provider: "openai", upstream: "scripted", tier: "balanced", ...perToken }]),
      openaiBaseUrl: Option.some(stub.openaiUrl),
      openaiApiKey: Option.some(Redacted.make("test")),
      llmMaxRetries: 0
    }))).pipe(Layer.provideMerge(FetchHttpClient.layer), Layer.provideMerge(Layer.effect(
      Upstream,
      Effect.acquireRelease(Effect.promise(() => startScriptedUpstream()), (stub) => Effect.promise(stub.close))
    )))

const play = (text: string) => Upstream.useSync((stub) => stub.play([{ text }]))

const contentCharges = (tenant: Tenant) =>
  Effect.map(usageHistory(tenant.organizationId, { featureKey: "content" }), (page) => page.events)

const brandKit = {
  name: "Acme Coffee",
  colors: { primary: "#6F4E37", accent: "#F2A541" },
  fonts: { heading: "\"Playfair Display\", serif" },
  voice: { tone: "warm and direct", audience: "café owners", dos: ["short sentences"], donts: ["jargon"] },
  links: { website: "https://acme.example" }
}

const emailText = "Subject: Spring sale: 20% off\n\nHi {{firstName}},\n\nAll roasts are 20% off until April 30.\n\nBest,\nAcme Coffee"

describe.each(backends)("content engine with a model on $name", ({ storage }) => {
  it.layer(withModel(storage), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("writes with the brand kit in the prompt, answers the parsed e-mail and bills the tokens under content", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("writer")
        const api = yield* makeClient({ apiKey: tenant.apiKey, baseUrl: yield* serverUrl, retries: 0 })
        yield* api.brandKit.put({ payload: brandKit })
        yield* play(emailText)
        const written = yield* api.content.generate({
          payload: { kind: "email", brief: "Announce our spring sale", tone: "playful", length: "short" }
        })
        expect(written).toEqual({
          subject: "Spring sale: 20% off",
          content: "Hi {{firstName}},\n\nAll roasts are 20% off until April 30.\n\nBest,\nAcme Coffee"
        })
        const [request] = yield* Upstream.useSync((stub) => stub.requests)
        const system = request.messages[0]
        expect(system.role).toBe("system")
        expect(system.content).toContain("First line: `Subject: `")
        expect(system.content).toContain("## Brand kit")
        expect(system.content).toContain("You write for Acme Coffee")
        expect(system.content).toContain("Tone of voice: warm and direct.")
        expect(system.content).toContain("Don't:\n  - jargon")
        expect(system.content).toContain("Brand colours: primary #6F4E37, accent #F2A541.")
        expect(request.messages[1].content).toContain("Brief: Announce our spring sale\nTone: playful")
        expect(request.max_tokens ?? request.max_completion_tokens).toBe(600)
        const charges = yield* contentCharges(tenant)
        expect(charges).toHaveLength(1)
        expect(charges[0]).toMatchObject({ model: "writer", credits: scriptedTurnUsage.input + scriptedTurnUsage.output })
      }))

    it.effect("streams text deltas, then done with the parsed subject lines", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("writer")
        const base = yield* serverUrl
        yield* play("1. Spring is here\n2. \"20% off every roast\"\n3. Your April treat")
        const answer = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, "/api/v0/content/generate", { kind: "subject_lines", brief: "Spring sale", stream: true }))
        expect(answer.status).toBe(200)
        expect(answer.contentType).toContain("text/event-stream")
        const kinds = answer.events.map((event) => event.event)
        expect(kinds.at(-1)).toBe("done")
        expect(kinds.slice(0, -1).every((kind) => kind === "text")).toBe(true)
        expect(kinds.length).toBeGreaterThan(2)
        expect(answer.events.slice(0, -1).map((event) => event.data.delta).join(""))
          .toBe("1. Spring is here\n2. \"20% off every roast\"\n3. Your April treat")
        expect(answer.events.at(-1)!.data).toEqual({
          content: "Spring is here\n20% off every roast\nYour April treat",
          variants: ["Spring is here", "20% off every roast", "Your April treat"]
        })
        expect(yield* contentCharges(tenant)).toHaveLength(1)
      }))

    it.effect("out of credits: 403 before any model call, streaming or not", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("writer")
        const base = yield* serverUrl
        yield* play(emailText)
        yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }, { feature: "setup", credits: 100_000 })
        const streamed = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, "/api/v0/content/generate", { kind: "email", brief: "x", stream: true }))
        expect(streamed.status).toBe(403)
        expect(streamed.error).toEqual({ error: "Insufficient credits" })
        const api = yield* makeClient({ apiKey: tenant.apiKey, baseUrl: base, retries: 0 })
        const refused = yield* Effect.flip(api.content.generate({ payload: { kind: "email", brief: "x" } }))
        expect(refused).toMatchObject({ _tag: "Forbidden", error: "Insufficient credits" })
        expect(yield* Upstream.useSync((stub) => stub.requests.length)).toBe(0)
      }))
  })
})

describe.each(backends)("content engine offline on $name", ({ storage }) => {
  it.layer(testServer(storage), { timeout: 60_000 })((it) => {
    const brief = "Write an email announcing our spring coffee sale. Every roast is 20% off until April 30."
    it.effect("writes every kind in its shape from the brief and the brand kit, and charges nothing", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* api.brandKit.put({ payload: brandKit })
        const write = (kind: "email" | "subject_lines" | "social_post" | "blog_post" | "ad_copy" | "landing_copy") =>
          api.content.generate({ payload: { kind, brief } }) as Effect.Effect<{ content: string; subject?: string; variants?: Array<string> }, unknown>

        const email = yield* write("email")
        expect(email.subject).toBe("Our spring coffee sale")
        expect(email.content).toMatch(/^Hi \{\{firstName\}\},/)
        expect(email.content).toContain("Every roast is 20% off until April 30.")
        expect(email.content).toContain("Learn more at https://acme.example.")
        expect(email.content).toMatch(/Best regards,\nAcme Coffee$/)

        const subjects = yield* write("subject_lines")
        expect(subjects.variants).toHaveLength(5)
        expect(subjects.variants![0]).toBe("Our spring coffee sale")
        expect(new Set(subjects.variants).size).toBe(5)

        const post = yield* write("social_post")
        expect(post.content).toContain("Our spring coffee sale")
        expect(post.content).toMatch(/#spring #coffee #sale$/)

        const blog = yield* write("blog_post")
        expect(blog.content).toMatch(/^# Our spring coffee sale\n/)
        expect(blog.content.match(/^## /gm)!.length).toBeGreaterThanOrEqual(3)

        const ads = yield* write("ad_copy")
        expect(ads.variants).toHaveLength(3)
        for (const variant of ads.variants!) {
          const [headline, description] = variant.split("\n")
          expect(headline).toMatch(/^Headline: .{1,30}$/)
          expect(description).toMatch(/^Description: /)
        }
        expect(ads.content).toBe(ads.variants![0])

        const landing = yield* write("landing_copy")
        expect(landing.content).toMatch(/^# Our spring coffee sale\n/)
        expect(landing.content).toContain("## Why it works")
        expect(landing.content).toContain("[Get started](https://acme.example)")

        expect(yield* contentCharges(tenant)).toEqual([])
      }))

    it.effect("longer lengths write more; without a brand kit the e-mail signs as the team", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const long = "Introduce our barista training. Classes run weekly. Each class has six seats. Certificates included. Lunch is provided."
        const sizes = yield* Effect.forEach(["short", "medium", "long"] as const, (length) =>
          Effect.map(api.content.generate({ payload: { kind: "blog_post", brief: long, length } }), (written) => (written as { content: string }).content.length))
        expect(sizes[0]).toBeLessThan(sizes[1]!)
        expect(sizes[1]).toBeLessThan(sizes[2]!)
        const email = (yield* api.content.generate({ payload: { kind: "email", brief: long } })) as { content: string }
        expect(email.content).toMatch(/^Hi \{\{firstName\}\},/)
        expect(email.content).toMatch(/Best regards,\nThe team$/)
        const formal = (yield* api.content.generate({ payload: { kind: "email", brief: long, tone: "formal" } })) as { content: string }
        expect(formal.content).toMatch(/^Dear \{\{firstName\}\},/)
        expect(formal.content).toMatch(/Kind regards,\nThe team$/)
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const cases = [
          [{ kind: "poem", brief: "x" }, "kind"],
          [{ brief: "x" }, "kind"],
          [{ kind: "email" }, "brief"],
          [{ kind: "email", brief: "   " }, "brief"],
          [{ kind: "email", brief: "x".repeat(10_001) }, "brief"],
          [{ kind: "email", brief: "x", length: "huge" }, "length"],
          [{ kind: "email", brief: "x", stream: "yes" }, "stream"],
          [{ kind: "email", brief: "x", tone: "" }, "tone"],
          [{ kind: "email", brief: "x", breif: "typo" }, "breif"]
        ] as const
        for (const [body, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey("POST", "/api/v0/content/generate", tenant.apiKey, body)), 400, field)
        }
      }))
  })
})
