import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { render } from "../../../src/outreach/messages/MergeFields.ts"
import { countGroups, expand, mergeFieldNames, parse, seededRandom, type Template } from "../../../src/work/content/Spintax.ts"
import { convert } from "../../../src/work/content/SpintaxConverter.ts"
import { typicalHtmlEmail } from "../../support/Emails.ts"

const parsed = (text: string): Template => Result.getOrThrow(parse(text))
const converted = (text: string, aggressive = false) => convert(text, { aggressive }).text

describe("the spintax converter", () => {
  it("keeps capitals and punctuation outside the group", () => {
    expect(converted("HELLO,\nbest regards!")).toBe("{{RANDOM | HELLO | HI | HEY}},\n{{RANDOM | best regards | kind regards | warm regards | all the best}}!")
    expect(converted("Hello there.")).toBe("{{RANDOM | Hello there | Hi there | Hey there}}.")
  })

  it("never varies links, addresses, numbers, prices, attributes or existing groups", () => {
    const text = "<p title=\"Best regards\">Great news: see https://quick.example/great or mail great@quick.example. " +
      "We assist 3 great teams for $49 quick.</p><p>{{RANDOM | Best regards | Cheers}}, {{firstName | friend}}</p>"
    const result = converted(text, true)
    expect(result).toContain("<p title=\"Best regards\">")
    expect(result).toContain("https://quick.example/great or mail great@quick.example.")
    expect(result).toContain("$49")
    expect(result).toContain("{{RANDOM | Best regards | Cheers}}, {{firstName | friend}}")
    expect(result).toContain("{{RANDOM | Great | Excellent | Wonderful}} news")
    expect(result).toContain("{{RANDOM | assist | help | aid}} 3 {{RANDOM | great | excellent | wonderful}} teams")
  })

  it("is stable: converting its own output adds nothing inside existing groups", () => {
    const once = converted(typicalHtmlEmail, true)
    expect(countGroups(parsed(converted(once, true)))).toBe(countGroups(parsed(once)))
  })

  it("output expands, for every recipient, to readable text that keeps the merge fields", () => {
    for (const aggressive of [false, true]) {
      const template = parsed(converted(typicalHtmlEmail, aggressive))
      const fields = mergeFieldNames(template)
      expect(fields).toEqual(["firstName", "company", "contactId"])
      for (let recipient = 0; recipient < 100; recipient++) {
        const variant = expand(template, seededRandom(`campaign:${recipient}`))
        const again = parsed(variant)
        expect(countGroups(again)).toBe(0)
        expect(mergeFieldNames(again)).toEqual(fields)
        expect(readEmail(variant).text.replace(/\{\{[^{}|]*\}\}/g, "")).not.toMatch(/[{}|]/)
        const personal = Result.getOrThrow(render(variant, { firstName: "Ada", company: "Acme & Co", contactId: "c1" }, { html: true, random: seededRandom("x") }))
        expect(personal).toContain("Acme &amp; Co")
        expect(personal).not.toContain("{{")
      }
    }
  })
})
