import { describe, expect, it } from "@effect/vitest"
import replacementData from "../../../src/work/content/data/spam-phrases.json" with { type: "json" }
import { readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { improveContent, improveSubject, unsubscribeLine } from "../../../src/work/content/SpamRewrite.ts"
import { analyse, isRiskyLink } from "../../../src/work/content/SpamRules.ts"
import { readCorpus } from "./SpamCorpus.ts"

/**
 * The offline rewrite of every spam mail of the corpus (calibration and
 * held-out sets) reads as written by a person: whole sentences, no risky
 * links or shouting, nothing the sender did not say, and a higher score.
 */

const spam = [...readCorpus("calibration"), ...readCorpus("holdout")].filter((mail) => mail.label === "spam")

/** Sentences of visible text: lines, split after ., ! or ? (abbreviations aside). */
const sentencesOf = (text: string) =>
  text.split("\n").flatMap((line) => line.split(/(?<=(?<!\b(?:Mr|Mrs|Ms|Dr|no|St|Esq))[.!?])\s+/)).map((sentence) => sentence.trim()).filter((sentence) => sentence.length > 0)

/** Words a rewrite may use: the original's, the neutral wordings' and the unsubscribe line's. */
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}']+/gu) ?? []
const neutralWords = new Set(Object.values(replacementData.categories).flatMap(({ phrases }) => Object.values(phrases).flatMap(wordsOf)))

/** What reads as broken writing, with why. */
const ungrammatical: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\p{Ll}/u, "starts in lower case"],
  [/\b(?:a|an|the|of|to|for|with|and|or|your|as|at|by)\s*[.!?;:]/i, "ends on an article, preposition or conjunction"],
  [/[.!?,;:]\s*[.!?,;]/, "doubled punctuation"],
  [/\s[.,!?;:]/, "space before punctuation"],
  [/ {2}/, "two spaces in a row"],
  [/\b\p{Lu}{4,}\b/u, "a shouted word"],
  [/when you have a moment/i, "an out-of-place stock phrase"]
]

describe("the offline rewrite of every spam mail in the corpus", () => {
  for (const mail of spam) {
    it(mail.name, () => {
      const content = improveContent(mail.content)
      const subject = improveSubject(mail.subject ?? "", content)
      expect(analyse(content, subject).overallScore).toBeGreaterThan(analyse(mail.content, mail.subject).overallScore)
      const markup = readEmail(content)
      expect(markup.links.filter(isRiskyLink).map((link) => link.href)).toEqual([])
      const text = markup.text.replace(unsubscribeLine, "")
      const sentences = [...sentencesOf(text), ...(subject.length > 0 ? [subject] : [])].filter((sentence) => !/^(?:https?:\/\/|www\.)\S+$/.test(sentence))
      for (const sentence of sentences) {
        for (const [pattern, why] of ungrammatical) expect(pattern.test(sentence), `${why}: “${sentence}”`).toBe(false)
      }
      const original = new Set(wordsOf(`${mail.subject ?? ""} ${readEmail(mail.content).text}`))
      const invented = wordsOf(`${subject} ${text}`).filter((word) => !original.has(word) && !neutralWords.has(word))
      expect(invented).toEqual([])
    })
  }
})
