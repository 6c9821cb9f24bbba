import { describe, expect, it } from "@effect/vitest"
import { maxHtmlDepth, readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { analyse, gmailClipBytes } from "../../../src/work/content/SpamRules.ts"
import { type Metric, verdictThresholds, weights } from "../../../src/work/content/SpamScore.ts"
import { improveContent, improveSubject, unsubscribeLine } from "../../../src/work/content/SpamRewrite.ts"
import { findTriggerPhrases, triggerPhrases } from "../../../src/work/content/TriggerPhrases.ts"
import { spammyHtmlEmail, spammySubject, typicalHtmlEmail } from "../../support/Emails.ts"

const metric = (content: string, name: string, subject?: string): Metric =>
  analyse(content, subject).metrics.find((candidate) => candidate.name === name)!

const footer = "Acme Ltd, 12 High Street, London SW1A 1AA. Reply unsubscribe to stop these e-mails."
const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i % 7 === 0 ? "" : "s"}`).join(" ")

describe("trigger phrases", () => {
  it("is a curated list of a few hundred categorised phrases whose replacements are clean", () => {
    expect(triggerPhrases.length).toBeGreaterThanOrEqual(250)
    expect(new Set(triggerPhrases.map((phrase) => phrase.category)).size).toBeGreaterThanOrEqual(5)
    for (const phrase of triggerPhrases) {
      expect(findTriggerPhrases(phrase.replacement), `replacement of ${phrase.phrase}`).toEqual([])
    }
  })

  it("matches whole words, ignoring case and punctuation, each phrase once", () => {
    const found = findTriggerPhrases("ACT NOW! Freedom is not free. Act now, really: act now. Click-here is not click here.")
    expect(found.map((phrase) => phrase.phrase)).toEqual(["act now", "free", "click here"])
    expect(findTriggerPhrases("freedom, carefree, actnow")).toEqual([])
  })

  it("never matches inside links, addresses or merge fields", () => {
    expect(findTriggerPhrases("https://free.example/act-now free@example.com {{ free }}")).toEqual([])
  })

  it("rewrites phrases at phrase and sentence boundaries: a neutral wording of the same kind, or the sentence goes", () => {
    expect(improveContent("Click here to see it. Hurry! We close at noon.\n\nOrder now before it is too late.\n\nBest, Jo\nMain Street 5, 10115 Berlin\nUnsubscribe: reply STOP"))
      .toBe("See the details to see it. We close at noon.\n\nOrder before it is too late.\n\nBest, Jo\nMain Street 5, 10115 Berlin\nUnsubscribe: reply stop")
    expect(improveContent("Dear customer,\nthis is urgent. Thanks for your order.\nUnsubscribe any time.")).toBe("Hello,\nThanks for your order.\nUnsubscribe any time.")
  })
})

describe("metrics", () => {
  it("scores a well-written e-mail excellent, with the eight documented metrics (SpamAssassin only when configured)", () => {
    const analysis = analyse(typicalHtmlEmail, "Interview reviews for {{company}}")
    expect(analysis.metrics.map((m) => m.name)).toEqual(Object.keys(weights).filter((name) => name !== "SpamAssassin"))
    expect(analysis.verdict).toBe("excellent")
    expect(analysis.overallScore).toBeGreaterThanOrEqual(90)
    expect(analysis.summary).toMatch(/^Deliverability score \d+\/100 \(excellent\)\./)
  })

  it("scores the spammy e-mail as spam and explains each finding", () => {
    const analysis = analyse(spammyHtmlEmail, spammySubject)
    expect(analysis.verdict).toBe("spam")
    expect(analysis.spamWordsFound).toEqual(expect.arrayContaining(["act now", "100% free", "guaranteed", "click here", "$$$", "urgent"]))
    const issues = (name: string) => analysis.metrics.find((m) => m.name === name)!.issues.join("\n")
    expect(issues("Links")).toMatch(/URL shortener: bit\.ly/)
    expect(issues("Links")).toMatch(/raw IP address: 192\.168\.10\.20/)
    expect(issues("Links")).toMatch(/shows paypal\.com but leads to bit\.ly/)
    expect(issues("Images")).toMatch(/2 images without alt text/)
    expect(issues("Formatting")).toMatch(/hidden text/)
    expect(issues("Formatting")).toMatch(/<font>/)
    expect(issues("Compliance")).toMatch(/No unsubscribe/)
    expect(issues("Subject line")).toMatch(/mostly in capitals/)
    expect(analysis.summary).toContain("trigger phrases found")
  })

  it("reads only visible text: scripts, styles and hidden elements are not the message", () => {
    const markup = readEmail("<html><head><title>FREE</title><style>.x{color:red}</style></head><body><p>Hello <b>there</b></p><script>free()</script><span hidden>x</span></body></html>")
    expect(markup.text).toBe("Hello there")
    expect(markup.hiddenCharacters).toBe(1)
  })

  it("weighs the subject only when there is one, and one very bad metric caps the whole", () => {
    const body = `<p>Hello {{firstName}}, ${words(80)}</p><p>${footer}</p>`
    expect(metric(body, "Subject line").description).toMatch(/not scored/)
    const clean = analyse(body, undefined).overallScore
    const shouting = analyse(body, "BUY NOW!!! FREE $$$ CASH BONUS GUARANTEED").overallScore
    expect(shouting).toBeLessThan(clean)
    expect(verdictThresholds.map(([verdict]) => verdict)).toEqual(["excellent", "good", "average", "poor", "spam"])
  })

  it("flags length: too short, and over Gmail's clipping size", () => {
    expect(metric("Hi there", "Length").issues[0]).toMatch(/Very short/)
    const huge = `<p>${footer}</p><p>${"Some ordinary words here. ".repeat(Math.ceil(gmailClipBytes / 26) + 10)}</p>`
    expect(metric(huge, "Length").issues.join()).toMatch(/Gmail clips/)
  })

  it("finds personalisation, malformed spintax and foreign merge tags", () => {
    expect(metric("Hi {{firstName}}, {{RANDOM | a | b}}", "Personalisation").description).toMatch(/Merge fields: firstName\. Spintax gives 2 variants/)
    expect(metric("Hi {{RANDOM | a | b", "Personalisation").issues[0]).toMatch(/Malformed .* line 1, column 4/)
    expect(metric("Hi *|FNAME|* and [First Name]", "Personalisation").issues.join()).toMatch(/Mailchimp.*\[First Name\]/s)
  })

  it("recognises an unsubscribe line and a postal address", () => {
    expect(metric(`<p>${words(60)}</p><p>${footer}</p>`, "Compliance").score).toBe(100)
    expect(metric(`${words(60)}\nPO Box 1234, Springfield\n<a href="https://x.example/u">Opt out</a>`, "Compliance").score).toBe(100)
  })
})

describe("the rule-based rewriter", () => {
  it("raises the score of a spammy e-mail, leaving markup, links and merge fields alone", () => {
    const before = analyse(spammyHtmlEmail, spammySubject)
    const content = improveContent(spammyHtmlEmail)
    const subject = improveSubject(spammySubject, content)
    const after = analyse(content, subject)
    expect(after.overallScore).toBeGreaterThan(before.overallScore)
    expect(after.spamWordsFound.length).toBeLessThan(before.spamWordsFound.length)
    expect(content).not.toContain("bit.ly")
    expect(content).toContain(unsubscribeLine)
    expect(content).not.toContain("pharmacy")
    expect(subject).toBe(subject.trim())
    expect(subject).not.toMatch(/[!$]/)
  })

  it("keeps merge fields and spintax while fixing plain text", () => {
    const text = "HI {{firstName}}!!! {{RANDOM | ACT NOW | Call us}} and get it FREE!!!"
    expect(improveContent(text)).toBe(`Hi {{firstName}}. {{RANDOM | ACT NOW | Call us}} and get it free.\n\n${unsubscribeLine}\n`)
  })
})

describe("hostile input stays linear", () => {
  // No timing: a quadratic step on these inputs would not finish within the test timeout.
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["deep nesting", "<div>".repeat(100_000) + "free" + "</div>".repeat(100_000)],
    ["unclosed tags", "<a href='x'>".repeat(40_000)],
    ["one huge word", "a".repeat(500_000)],
    ["many links", "<a href=\"https://bit.ly/x\">www.example.com</a>".repeat(10_000)],
    ["brace soup", "{{".repeat(100_000) + "}}".repeat(100_000)],
    ["pipes and digits", "1 |".repeat(150_000)],
    ["address-like", "1 Main ".repeat(60_000)],
    ["percent tags", "%A".repeat(200_000)],
    ["long attribute", `<p style="${"color:red;".repeat(40_000)}">x</p>`]
  ]
  it("stops reading HTML nested deeper than the documented depth", () => {
    const deep = "<div>".repeat(maxHtmlDepth + 10) + "x"
    expect(readEmail(deep).tooDeepAt).toBe(maxHtmlDepth * 5)
    expect(readEmail("<div>".repeat(maxHtmlDepth) + "x").tooDeepAt).toBeUndefined()
  })

  for (const [name, content] of cases) {
    it(name, () => {
      const analysis = analyse(content, "subject")
      expect(analysis.overallScore).toBeGreaterThanOrEqual(0)
      expect(improveContent(content).length).toBeGreaterThan(0)
    })
  }
})
