import { expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { HttpClientRequest } from "effect/http"
import { maxContentBytes } from "../../../src/work/content/Api.ts"
import { maxHtmlDepth, readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { expand, format, mergeFieldNames, parse, seededRandom, type Template } from "../../../src/work/content/Spintax.ts"
import { failsWith } from "../../support/Assertions.ts"
import { spammyHtmlEmail, spammySubject, typicalHtmlEmail } from "../../support/Emails.ts"
import { expectErrorResponse, postJson, send } from "../../support/Http.ts"
import { addPerson, backends, client, seedTenant, testServer } from "../../support/TestServer.ts"
import { usageHistory } from "../../support/Usage.ts"

const parsed = (text: string): Template => Result.getOrThrow(parse(text))

/** The visible text outside merge fields: what a recipient reads once the fields are filled. */
const readableText = (html: string) => readEmail(html).text.replace(/\{\{[^{}|]*\}\}/g, "")

for (const backend of backends) {
  it.layer(testServer(backend.storage))(`content API (${backend.name})`, (it) => {
    it.effect("spam check: a good e-mail scores well and carries no rewrite", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const analysis = yield* api.content.spamCheck({ payload: { content: typicalHtmlEmail, subject: "Interview reviews for {{company}}" } })
        expect(analysis.verdict).toBe("excellent")
        expect(analysis.metrics).toHaveLength(8)
        expect(analysis.improvedContent).toBeUndefined()
        expect(analysis.improvedSubject).toBeUndefined()
      }))

    it.effect("spam check: a spammy e-mail gets rewrites that score higher, offline and unbilled", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const analysis = yield* api.content.spamCheck({ payload: { content: spammyHtmlEmail, subject: spammySubject, companyId: tenant.companyId } })
        expect(analysis.overallScore).toBeLessThan(40)
        expect(analysis.verdict).toBe("spam")
        expect(analysis.spamWordsFound).toContain("act now")
        const improved = yield* api.content.spamCheck({
          payload: { content: analysis.improvedContent!, subject: analysis.improvedSubject! }
        })
        expect(improved.overallScore).toBeGreaterThan(analysis.overallScore)
        const events = yield* usageHistory(tenant.organizationId)
        expect(events.events).toEqual([])
      }))

    it.effect("spintax: phrases vary, protected text stays, every expansion reads cleanly", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const result = yield* api.content.spintax({ payload: { content: typicalHtmlEmail, subject: "Quick question for {{firstName}}" } })
        expect(result.content).toContain("{{RANDOM | Hi | Hello | Hey}} {{firstName}},")
        expect(result.content).toContain("{{RANDOM | Best regards | Kind regards | Warm regards | All the best}}")
        expect(result.subject).toBe("{{RANDOM | Quick question | Short question | Brief question}} for {{firstName}}")
        expect(result.explanation).toMatch(/Varied \d+ phrases .* The content now has \d+ distinct variants, the subject 3\./)
        for (const kept of ["href=\"https://acme-reviews.example/sample-report\"", "$49", "{{company}}", "Torstraße 12, 10119 Berlin",
          "https://acme-reviews.example/unsubscribe?id={{contactId}}", "body { font-family: Helvetica, Arial, sans-serif; color: #222222; }"]) {
          expect(result.content).toContain(kept)
        }
        const template = parsed(result.content)
        expect(mergeFieldNames(template)).toEqual(mergeFieldNames(parsed(typicalHtmlEmail)))
        for (let recipient = 0; recipient < 50; recipient++) {
          const variant = expand(template, seededRandom(`cmp:${recipient}`))
          expect(format(parsed(variant))).toBe(variant)
          expect(readableText(variant)).not.toMatch(/[{}|]/)
          expect(mergeFieldNames(parsed(variant))).toEqual(mergeFieldNames(template))
          expect(variant).toContain("$49 per")
        }
      }))

    it.effect("spintax: a count of variants past any number reads as words, not Infinity", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const { explanation } = yield* api.content.spintax({ payload: { content: "{{RANDOM | a | b}} ".repeat(2_000), subject: "{{RANDOM | x | y}}" } })
        expect(explanation).toContain("The content now has more than a quadrillion distinct variants, the subject 2.")
        expect(explanation).not.toContain("Infinity")
      }))

    it.effect("spintax: existing groups survive and aggressive varies at least as much", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const content = "{{RANDOM | Hello | Hi}} {{firstName}}, we could assist you. Our team will evaluate your large project and provide a detailed estimate; it is roughly 2 weeks of work. Thank you."
        const normal = yield* api.content.spintax({ payload: { content } })
        const aggressive = yield* api.content.spintax({ payload: { content, aggressive: true } })
        expect(normal.content.startsWith("{{RANDOM | Hello | Hi}} {{firstName}},")).toBe(true)
        const groups = (text: string) => text.split("{{RANDOM").length - 1
        expect(groups(aggressive.content)).toBeGreaterThan(groups(normal.content))
        expect(aggressive.content).toContain("{{RANDOM | assist | help | aid}}")
        expect(aggressive.content).toContain("2 weeks")
        expect(aggressive.subject).toBe("")
      }))

    it.effect("bad input answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
          ["spam-check", {}, /content/],
          ["spam-check", { content: "   " }, /content.*must not be empty/],
          ["spam-check", { content: "x".repeat(maxContentBytes + 1) }, /content.*at most 500 KB/],
          ["spam-check", { content: "é".repeat(maxContentBytes / 2 + 1) }, /content.*at most 500 KB/],
          ["spam-check", { content: "hi", subject: 5 }, /subject/],
          ["spam-check", { content: "<div>".repeat(maxHtmlDepth + 1) }, /nest deeper than 256 levels/],
          ["spam-check", { content: "hi", tone: "calm" }, /tone/],
          ["spintax", { subject: "x" }, /content/],
          ["spintax", { content: "hi", aggressive: "yes" }, /aggressive/],
          ["spintax", { content: "Hello\n{{RANDOM | a | b" }, /Malformed spintax in content: Unclosed "\{\{RANDOM" at line 2, column 1/],
          ["spintax", { content: "ok", subject: "Hi }} there" }, /Malformed spintax in subject: Unexpected "\}\}".*column 4/]
        ]
        for (const [endpoint, body, message] of cases) {
          expectErrorResponse(yield* send(postJson(`/api/v0/content/${endpoint}`, body, tenant.apiKey)), 400, message)
        }
      }))

    it.effect("both endpoints are in the OpenAPI document with summaries and descriptions", () =>
      Effect.gen(function*() {
        const document = (yield* send(HttpClientRequest.get("/api/v0/openapi.json"))).body as {
          readonly paths: Record<string, Record<string, { operationId: string; summary?: string; description?: string }>>
        }
        for (const [path, operationId] of [["/api/v0/content/spam-check", "content_spamCheck"], ["/api/v0/content/spintax", "content_spintax"]]) {
          const operation = document.paths[path]!.post!
          expect(operation.operationId).toBe(operationId)
          expect(operation.summary).toMatch(/\w/)
          expect(operation.description).toContain("content:use")
        }
      }))

    it.effect("another company's id answers 404; a viewer is refused; no key is 401", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* failsWith(api.content.spamCheck({ payload: { content: "Hello", companyId: other.companyId } }), "NotFound")
        yield* failsWith(api.content.spintax({ payload: { content: "Hello", companyId: other.companyId } }), "NotFound")
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const viewing = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(viewing.content.spintax({ payload: { content: "Hello" } }), "Forbidden", /viewer/)
        expectErrorResponse(yield* send(postJson("/api/v0/content/spam-check", { content: "Hello" })), 401)
      }))
  })
}
