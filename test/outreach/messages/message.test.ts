import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { createSecretKey } from "node:crypto"
import { clickTarget, parseTemplates, renderMessage } from "../../../src/outreach/messages/Message.ts"
import { signToken, verifyToken } from "../../../src/outreach/messages/TrackingTokens.ts"

const key = createSecretKey(Buffer.from("k".repeat(32)))
const urls = {
  open: "https://mail.example.com/api/v0/t/o/OPEN",
  click: (link: number) => `https://mail.example.com/api/v0/t/c/CLICK${link}`,
  unsubscribe: "https://mail.example.com/api/v0/t/u/UNSUB"
}

const templatesOf = (subject: string, html: string) => Result.getOrThrow(parseTemplates(subject, html))

describe("tracking tokens", () => {
  it("round-trip each kind and name the recipient and link", () => {
    for (const link of [
      { kind: "open", recipientId: "rcp_1" },
      { kind: "click", recipientId: "rcp_1", link: 3 },
      { kind: "unsubscribe", recipientId: "rcp_2" }
    ] as const) {
      expect(verifyToken(key, signToken(key, link))).toEqual(link)
    }
  })

  it("refuse forged, tampered, re-signed and malformed tokens", () => {
    const token = signToken(key, { kind: "click", recipientId: "rcp_1", link: 0 })
    const [payload, mac] = token.split(".")
    const otherPayload = Buffer.from("c:rcp_2:0").toString("base64url")
    const cases = [
      `${otherPayload}.${mac}`,
      `${payload}.${mac.slice(0, -2)}AA`,
      signToken(createSecretKey(Buffer.from("another secret")), { kind: "click", recipientId: "rcp_1", link: 0 }),
      `${payload}`,
      `${payload}.${mac}.x`,
      "",
      "x".repeat(600),
      `${Buffer.from("c:rcp_1:-1").toString("base64url")}.${signToken(key, { kind: "open", recipientId: "x" }).split(".")[1]}`
    ]
    for (const forged of cases) expect(verifyToken(key, forged)).toBeUndefined()
  })
})

describe("campaign message rendering", () => {
  const recipient = { id: "rcp_42", fields: { email: "ada@example.com", firstName: "Ada <3", city: "Paris" } }

  it("expands merge fields (HTML-escaped) and spintax, rewrites web links, keeps others, adds the pixel", () => {
    const templates = templatesOf(
      "Hi {{firstName}} from {{city}}",
      "<html><body><p>{{RANDOM | Hello | Hi}} {{firstName}}</p>" +
        "<a href=\"https://example.com/a?c={{city}}\">A</a> <a href=\"mailto:x@example.com\">mail</a>" +
        "<a href=\"{{unsubscribeUrl}}\">unsubscribe</a><a href=\"http://example.org/b\">B</a></body></html>"
    )
    const message = renderMessage(templates, recipient, urls)
    expect(message.subject).toBe("Hi Ada <3 from Paris")
    expect(message.html).toMatch(/<p>(Hello|Hi) Ada &lt;3<\/p>/)
    expect(message.html).toContain(`href="${urls.click(0)}"`)
    expect(message.html).toContain(`href="${urls.click(1)}"`)
    expect(message.html).toContain("href=\"mailto:x@example.com\"")
    expect(message.html).toContain(`href="${urls.unsubscribe}"`)
    expect(message.html).not.toContain("https://example.com/a?")
    expect(message.html).toMatch(new RegExp(`<img src="${urls.open}"[^>]*></body>`))
    expect(renderMessage(templates, recipient, urls)).toEqual(message)

    expect(clickTarget(templates, recipient, urls.unsubscribe, 0)).toBe("https://example.com/a?c=Paris")
    expect(clickTarget(templates, recipient, urls.unsubscribe, 1)).toBe("http://example.org/b")
    expect(clickTarget(templates, recipient, urls.unsubscribe, 2)).toBeUndefined()
    expect(message.text).toMatch(/^(Hello|Hi) Ada <3/)
    expect(message.text).toContain("https://example.com/a?c=Paris")
  })

  it("a subject cannot gain header lines from merge values", () => {
    const templates = templatesOf("Hi {{firstName}}", "<p>x</p>")
    const message = renderMessage(templates, { id: "r", fields: { firstName: "A\r\nBcc: x@evil.com" } }, urls)
    expect(message.subject).toBe("Hi A Bcc: x@evil.com")
  })

  it("malformed spintax is refused with its position", () => {
    const parsed = parseTemplates("ok", "<p>\n{{RANDOM | a | b</p>")
    expect(Result.isFailure(parsed) && parsed.failure).toMatch(/bodyDocument\.html: .* line 2/)
  })
})
