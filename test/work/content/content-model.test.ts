import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { analyse } from "../../../src/work/content/SpamRules.ts"
import { unsubscribeLine } from "../../../src/work/content/SpamRewrite.ts"
import { failsWith } from "../../support/Assertions.ts"
import { spend } from "../../support/Billing.ts"
import { spammyHtmlEmail, spammySubject, typicalHtmlEmail } from "../../support/Emails.ts"
import { startStubUpstream, type StubUpstream } from "../../support/StubUpstream.ts"
import { client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

/** What the stand-in model answers, switched per test by the marker word in the e-mail. */
const cleanRewrite = {
  subject: "A note about our reviews",
  content: "<p>Hello {{firstName}},</p><p>We review take-home assignments for engineering teams and send a written report " +
    "within two working days, so your hiring managers spend their time on the best candidates rather than on grading. " +
    "Would a short call next week be useful to see a sample report?</p><p>Best regards,<br>Anna, Acme Reviews, " +
    "12 High Street, London SW1A 1AA</p><p><a href=\"https://acme.example/unsubscribe\">Unsubscribe</a></p>"
}

const answer = (prompt: string): string | undefined => {
  if (prompt.includes("marker-clean")) return `Here you go:\n\`\`\`json\n${JSON.stringify(cleanRewrite)}\n\`\`\``
  if (prompt.includes("marker-worse")) return JSON.stringify({ subject: "FREE CASH NOW!!!", content: "ACT NOW!!! FREE $$$" })
  if (prompt.includes("marker-garbage")) return "I cannot help with that."
  if (prompt.includes("marker-spintax")) {
    return JSON.stringify({
      variations: [
        { phrase: "our reviewers grade", alternatives: ["our reviewers score", "{{RANDOM | x}}", "our reviewers grade"] },
        { phrase: "within two days", alternatives: ["in 2 days", "https://evil.example", "<b>soon</b>"] },
        { phrase: "Thanks", alternatives: ["Thank you | really"] }
      ]
    })
  }
  return undefined
}

class Upstream extends Context.Service<Upstream, StubUpstream>()("test/ContentUpstream") {}

const upstream = Layer.effect(
  Upstream,
  Effect.acquireRelease(Effect.promise(() => startStubUpstream({ answer })), (stub) => Effect.promise(stub.close))
)

const server = Layer.unwrap(Upstream.useSync((stub) =>
  testServer(pgliteStorage, {
    llmModels: Option.some([{ id: "writer", provider: "openai", upstream: "stub-writer", tier: "balanced" }]),
    openaiBaseUrl: Option.some(stub.url),
    llmMaxRetries: 0
  })
)).pipe(Layer.provideMerge(upstream))

const contentEvents = (organizationId: string) =>
  usageHistory(organizationId).pipe(
    Effect.map((page) => page.events.filter((event) => event.feature === "content"))
  )

it.layer(server)("content tools with a model", (it) => {
  it.effect("the model's rewrite is used when it scores better, and billed under content", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const analysis = yield* api.content.spamCheck({ payload: { content: `${spammyHtmlEmail} marker-clean`, subject: spammySubject } })
      expect(analysis.improvedContent).toBe(cleanRewrite.content)
      expect(analysis.improvedSubject).toBe(cleanRewrite.subject)
      expect(analyse(cleanRewrite.content, cleanRewrite.subject).overallScore).toBeGreaterThan(analysis.overallScore)
      const events = yield* contentEvents(tenant.organizationId)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ model: "writer", inputTokens: 21, outputTokens: 7 })
    }))

  it.effect("a rewrite that scores worse, or no usable answer, falls back to the rules (still billed)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      for (const marker of ["marker-worse", "marker-garbage"]) {
        const analysis = yield* api.content.spamCheck({ payload: { content: `${spammyHtmlEmail} ${marker}`, subject: spammySubject } })
        expect(analysis.improvedContent).toContain(unsubscribeLine)
        expect(analyse(analysis.improvedContent!, analysis.improvedSubject).overallScore).toBeGreaterThan(analysis.overallScore)
      }
      expect(yield* contentEvents(tenant.organizationId)).toHaveLength(2)
    }))

  it.effect("spintax takes the model's proposals only where they are plain wording", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const result = yield* api.content.spintax({
        payload: { content: "Hi {{firstName}}, our reviewers grade within two days. Thanks! marker-spintax" }
      })
      expect(result.content).toContain("{{RANDOM | our reviewers grade | our reviewers score}}")
      expect(result.content).toContain("within two days")
      expect(result.content).not.toMatch(/evil|<b>|in 2 days|really/)
      expect(result.content).toContain("{{RANDOM | Thanks | Thank you | Many thanks}}!")
      expect(result.explanation).toContain("proposed by a model")
      expect(yield* contentEvents(tenant.organizationId)).toHaveLength(1)
    }))

  it.effect("out of credits: 403 before the model is asked, for both tools", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant()
      const api = yield* client({ apiKey: tenant.apiKey })
      const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: null }
      yield* spend(payer, { feature: "test", credits: 100_000 })
      const asked = yield* Upstream.useSync((stub) => stub.requests.length)
      yield* failsWith(api.content.spamCheck({ payload: { content: spammyHtmlEmail } }), "Forbidden", "Insufficient credits")
      yield* failsWith(api.content.spintax({ payload: { content: "Hello there" } }), "Forbidden", "Insufficient credits")
      expect(yield* Upstream.useSync((stub) => stub.requests.length)).toBe(asked)
      expect((yield* api.content.spamCheck({ payload: { content: typicalHtmlEmail } })).improvedContent).toBeUndefined()
    }))
})
