import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { brandGuide } from "../../../src/work/brand/BrandGuide.ts"
import { postJson, streamChat } from "../../support/DesignChatClient.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { png } from "../../support/Images.ts"
import { loopbackServer, serverUrl } from "../../support/LoopbackServer.ts"
import { type ScriptedUpstream, startScriptedUpstream } from "../../support/ScriptedUpstream.ts"
import { addPerson, backends, client, seedTenant, type Tenant, testServer } from "../../support/TestServer.ts"

const fullKit = {
  name: "Acme Coffee",
  colors: { primary: "#6F4E37", secondary: "#fff", accent: "#F2A541", background: "#FFFFFF", text: "#222" },
  fonts: { heading: "\"Playfair Display\", serif", body: "Inter, 'Helvetica Neue', sans-serif" },
  voice: { tone: "warm and direct", audience: "café owners", dos: ["short sentences", "name the price"], donts: ["jargon"] },
  links: { website: "https://acme.example", instagram: "https://instagram.com/acme" }
}

/** An uploaded image of the tenant (a template upload), for `logoFileId`. */
const uploadLogo = (tenant: Tenant) =>
  Effect.gen(function*() {
    const api = yield* client({ apiKey: tenant.apiKey })
    const template = yield* api.templates.create({ payload: { name: "Logo holder" } })
    const form = new FormData()
    form.append("file", new Blob([new Uint8Array(png(4, 4))], { type: "image/png" }), "logo.png")
    return yield* api.templates.upload({ params: { templateId: template.id }, payload: form })
  })

describe.each(backends)("brand kit on $name", ({ storage }) => {
  it.layer(testServer(storage, { publicBaseUrl: "https://app.acme.test" }), { timeout: 60_000 })((it) => {
    it.effect("is empty before the first PUT; PUT replaces it whole; GET reads it back", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        expect(yield* api.brandKit.get({ query: {} })).toEqual({
          companyId: tenant.companyId,
          name: null,
          logoFileId: null,
          logoUrl: null,
          colors: {},
          fonts: {},
          voice: {},
          links: {},
          updated: null
        })
        const logo = yield* uploadLogo(tenant)
        const saved = yield* api.brandKit.put({ payload: { ...fullKit, logoFileId: logo.id } })
        expect(saved).toMatchObject({ ...fullKit, companyId: tenant.companyId, logoFileId: logo.id, logoUrl: logo.url })
        expect(saved.logoUrl).toMatch(/^https:\/\/app\.acme\.test\/api\/v0\/public\/files\//)
        expect(yield* api.brandKit.get({ query: {} })).toEqual(saved)

        const replaced = yield* api.brandKit.put({ payload: { colors: { primary: "#000" } } })
        expect(replaced).toMatchObject({ name: null, logoFileId: null, logoUrl: null, colors: { primary: "#000" }, fonts: {}, voice: {}, links: {} })
        expect(replaced.updated!).toBeGreaterThan(saved.updated!)
      }))

    it.effect("gives writing features a prompt section and the colours and fonts as CSS variables", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        expect(yield* brandGuide(tenant.companyId)).toEqual({ prompt: "", css: "" })
        const logo = yield* uploadLogo(tenant)
        yield* (yield* client({ apiKey: tenant.apiKey })).brandKit.put({ payload: { ...fullKit, logoFileId: logo.id } })
        const guide = yield* brandGuide(tenant.companyId)
        expect(guide.css).toBe(
          ":root{--brand-primary:#6F4E37;--brand-secondary:#fff;--brand-accent:#F2A541;--brand-background:#FFFFFF;" +
            "--brand-text:#222;--brand-font-heading:\"Playfair Display\", serif;--brand-font-body:Inter, 'Helvetica Neue', sans-serif}"
        )
        expect(guide.prompt).toBe([
          "## Brand kit",
          "Follow the company's brand kit.",
          "You write for Acme Coffee; use this name for the brand.",
          "Tone of voice: warm and direct.",
          "Audience: café owners.",
          "Do:\n  - short sentences\n  - name the price",
          "Don't:\n  - jargon",
          "Brand colours: primary #6F4E37, secondary #fff, accent #F2A541, background #FFFFFF, text #222.",
          "Brand fonts: heading: \"Playfair Display\", serif; body: Inter, 'Helvetica Neue', sans-serif.",
          `Logo image: ${logo.url}`,
          "Links: website https://acme.example, instagram https://instagram.com/acme"
        ].join("\n"))
      }))

    it.effect("bad values answer 400 naming the field; another company's file is not a logo", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const theirLogo = yield* uploadLogo(other)
        const cases = [
          [{ colors: { primary: "red" } }, "colors.primary"],
          [{ colors: { accent: "#12345" } }, "colors.accent"],
          [{ colors: { text: "#GGG" } }, "colors.text"],
          [{ colors: { background: "#fff;}body{x:y" } }, "colors.background"],
          [{ colors: { purple: "#fff" } }, "purple"],
          [{ fonts: { heading: "Arial; } body { color: red" } }, "fonts.heading"],
          [{ fonts: { body: "\"Unclosed, serif" } }, "fonts.body"],
          [{ links: { website: "javascript:alert(1)" } }, "links.website"],
          [{ voice: { dos: [""] } }, "voice.dos"],
          [{ name: "" }, "name"],
          [{ logoFileId: theirLogo.id }, `logoFileId: no file ${theirLogo.id} in this company`],
          [{ logoFileId: "fil_unknown" }, "logoFileId: no file fil_unknown in this company"]
        ] as const
        for (const [body, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey("PUT", "/api/v0/brand-kit", tenant.apiKey, body)), 400, field)
        }
        expect((yield* (yield* client({ apiKey: tenant.apiKey })).brandKit.get({ query: {} })).updated).toBeNull()
      }))

    it.effect("one kit per company: members read it, only managers change it", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        yield* (yield* client({ apiKey: tenant.apiKey })).brandKit.put({ payload: { name: "Ours" } })
        expect((yield* (yield* client({ apiKey: other.apiKey })).brandKit.get({ query: {} })).name).toBeNull()
        const member = yield* addPerson(tenant, { companyRole: "member" })
        const api = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
        expect((yield* api.brandKit.get({ query: {} })).name).toBe("Ours")
        expect((yield* Effect.flip(api.brandKit.put({ payload: { name: "Theirs" } })))._tag).toBe("Forbidden")
        expect((yield* Effect.flip((yield* client({ apiKey: other.apiKey })).brandKit.get({ query: { companyId: tenant.companyId } })))._tag)
          .toBe("NotFound")
      }))
  })
})

class Upstream extends Context.Service<Upstream, ScriptedUpstream>()("test/BrandUpstream") {}

describe("the design chat follows the brand kit", () => {
  const server = Layer.unwrap(Upstream.useSync((stub) =>
    loopbackServer(backends[0]!.storage, {
      llmModels: Option.some([{ id: "designer", provider: "openai", upstream: "scripted" }]),
      openaiBaseUrl: Option.some(stub.openaiUrl),
      openaiApiKey: Option.some(Redacted.make("test")),
      design: { model: "designer" }
    }))).pipe(Layer.provideMerge(Layer.effect(
      Upstream,
      Effect.acquireRelease(Effect.promise(() => startScriptedUpstream()), (stub) => Effect.promise(stub.close))
    )))
  it.layer(server, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("the chat's system prompt carries the brand kit's section", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant("design-brand")
        const base = yield* serverUrl
        expect((yield* Effect.promise(() => postJson(base, tenant.apiKey, "/api/v0/brand-kit", fullKit, "PUT"))).status).toBe(200)
        const bodyDocument = { html: "<h1>Hello</h1>" }
        const campaign = yield* Effect.promise(() =>
          postJson(base, tenant.apiKey, "/api/v0/marketing-campaigns", { name: "Spring", subject: "Hi", bodyDocument }))
        yield* Upstream.useSync((stub) => stub.play([{ text: "Looks on brand." }]))
        const answer = yield* Effect.promise(() =>
          streamChat(base, tenant.apiKey, `/api/v0/marketing-campaigns/${campaign.body.id}/chat`, { message: "Check it", bodyDocument }))
        expect(answer.events.at(-1)!.event).toBe("done")
        const [request] = yield* Upstream.useSync((stub) => stub.requests)
        expect(request.messages[0].content).toContain("## Brand kit\nFollow the company's brand kit.\nYou write for Acme Coffee")
        expect(request.messages[0].content).toContain("Brand colours: primary #6F4E37")
      }))
  })
})
