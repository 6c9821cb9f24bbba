import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { expand, parse, seededRandom } from "../../../src/work/content/Spintax.ts"
import { convert } from "../../../src/work/content/SpintaxConverter.ts"
import { readCorpus } from "./SpamCorpus.ts"

/**
 * Spintax that stays grammatical: five realistic e-mails of the corpus (plain
 * and HTML, with merge fields) converted, each expanded for 200 recipients,
 * normal and aggressive. No expansion may hold a known-bad swap, and every
 * one reads as the same sentences as the original.
 */

const samples = readCorpus("calibration").filter((mail) =>
  ["ham/31-outreach-partnership.eml", "ham/32-outreach-saas.eml", "ham/34-outreach-followup.eml", "ham/23-newsletter-bakery.eml", "ham/26-newsletter-saas-product.eml"]
    .includes(mail.name)
)

/** Swaps seen to break sentences: a preposition or conjunction read as an adverb, sign-offs mid-sentence, articles that no longer fit. */
const knownBad: ReadonlyArray<RegExp> = [
  /\bearlier (?:your|you|the|it|we|i)\b/i,
  /\bconsequently [a-z]/i,
  /\b(?:the|a|to|i) (?:all the best|best regards|kind regards|many thanks|thanks)\b/i,
  /\bwhat is more to\b/i,
  /\bin the coming week\b/i,
  /\bmany (?:time|money|work|information)\b/i,
  /\b(?:a|an) (?:a|an)\b/i,
  /\bhelps you to\b/i,
  /\bhello (?:friend|customer)\b/i
]

/** Visible text without merge fields: what a recipient reads. */
const readable = (html: string) => readEmail(html).text.replace(/\{\{[^{}]*\}\}/g, "")
const sentenceCount = (text: string) => text.split(/(?<=[.!?])\s+|\n+/).filter((sentence) => /\p{L}/u.test(sentence)).length
/** "a" or "an" before a word that takes the other one (first letter a vowel or not; the few exceptions are not in these e-mails). */
const articleMismatches = (text: string) =>
  [...text.matchAll(/\b(a|an) ([a-z]+)/gi)].filter(([, article, word]) => (article!.toLowerCase() === "an") !== /^[aeiou]/i.test(word!)).map(([bigram]) => bigram)

describe("spintax expansions stay grammatical", () => {
  it("uses five realistic e-mails", () => expect(samples).toHaveLength(5))

  for (const mail of samples) {
    for (const aggressive of [false, true]) {
      it(`${mail.name}${aggressive ? " (aggressive)" : ""}`, () => {
        const template = Result.getOrThrow(parse(convert(mail.content, { aggressive }).text))
        const original = readable(mail.content)
        const originalMismatches = articleMismatches(original)
        const variants = new Set<string>()
        for (let recipient = 0; recipient < 200; recipient++) {
          const text = readable(expand(template, seededRandom(`${mail.name}:${recipient}`)))
          variants.add(text)
          for (const bad of knownBad) expect(bad.test(text) && !bad.test(original), `${bad} in “${text}”`).toBe(false)
          expect(articleMismatches(text)).toEqual(originalMismatches)
          expect(sentenceCount(text)).toBe(sentenceCount(original))
        }
        // The conversion varies the text: the check is not passed by leaving it alone.
        expect(variants.size).toBeGreaterThan(1)
      })
    }
  }
})

describe("words are swapped only where the alternative fits", () => {
  const aggressive = (text: string) => convert(text, { aggressive: true }).text

  it("leaves a preposition or conjunction alone where WordNet only knows the adverb", () => {
    expect(aggressive("Shop now before your size sells out, so we can ship it on Monday.")).not.toMatch(/earlier|consequently/)
    expect(aggressive("We almost finished the report.")).toContain("{{RANDOM | almost | nearly | virtually}}")
  })

  it("varies a word only in its table's part of speech and base form", () => {
    expect(aggressive("We want to buy a house.")).toContain("{{RANDOM | buy | purchase}}")
    expect(aggressive("The buy was good.")).not.toContain("purchase")
    expect(aggressive("She buys houses.")).not.toContain("{{RANDOM")
  })

  it("keeps the article right and keeps sign-offs and greetings in their place", () => {
    expect(aggressive("It is a great plan.")).toContain("{{RANDOM | great | wonderful}}")
    expect(aggressive("I wanted to thank you for the report. It was the best way.")).not.toContain("{{RANDOM")
  })
})
