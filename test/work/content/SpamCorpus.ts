import { Effect, Option } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { readEmail } from "../../../src/work/content/EmailMarkup.ts"
import { SpamAssassin, type SpamAssassinReport } from "../../../src/work/content/SpamAssassin.ts"
import { analyse } from "../../../src/work/content/SpamRules.ts"
import { hasSubject, type SpamAnalysis, withSpamAssassin } from "../../../src/work/content/SpamScore.ts"

/**
 * The labelled e-mail corpus of `test/fixtures/spam-corpus/` (ham and spam,
 * one single-part message per `.eml` file, no transfer encoding), read into
 * the subject and body the spam check takes.
 */

export type Label = "ham" | "spam"

export interface CorpusMail {
  readonly name: string
  readonly label: Label
  readonly subject: string | undefined
  readonly content: string
  /** The file as it is, for tools that read whole messages. */
  readonly raw: string
}

export const corpusDir = join(import.meta.dirname, "..", "..", "fixtures", "spam-corpus")

const readMail = (label: Label, folder: string, name: string): CorpusMail => {
  const raw = readFileSync(join(folder, name), "utf8")
  const split = raw.indexOf("\n\n")
  const headers = raw.slice(0, split)
  const subject = /^Subject:[ \t]*(.*)$/im.exec(headers)?.[1]?.trim()
  return { name: `${label}/${name}`, label, subject, content: raw.slice(split + 2), raw }
}

/** Every mail of the corpus (or of its `holdout` part), ham first, in file order. */
export const readCorpus = (part: "calibration" | "holdout" = "calibration"): ReadonlyArray<CorpusMail> =>
  (["ham", "spam"] as const).flatMap((label) => {
    const folder = part === "holdout" ? join(corpusDir, "holdout", label) : join(corpusDir, label)
    return readdirSync(folder).filter((name) => name.endsWith(".eml")).sort().map((name) => readMail(label, folder, name))
  })

/**
 * ROC AUC of scores where a higher score means "more likely ham": the share of
 * (ham, spam) pairs ranked the right way, ties counting half.
 */
export const rocAuc = (scored: ReadonlyArray<{ readonly label: Label; readonly score: number }>): number => {
  const ham = scored.filter((mail) => mail.label === "ham").map((mail) => mail.score)
  const spam = scored.filter((mail) => mail.label === "spam").map((mail) => mail.score)
  let right = 0
  for (const h of ham) for (const s of spam) right += h > s ? 1 : h === s ? 0.5 : 0
  return right / (ham.length * spam.length)
}

export interface ScoredMail extends CorpusMail {
  /** This project's rules alone. */
  readonly rules: SpamAnalysis
  /** SpamAssassin's report, and the rules with it as one more metric (when SpamAssassin ran). */
  readonly spamAssassin: SpamAssassinReport | undefined
  readonly combined: SpamAnalysis | undefined
}

/** The corpus through the rules and, when it is configured, SpamAssassin (two at a time). */
export const scoreCorpus = (mails: ReadonlyArray<CorpusMail>) =>
  Effect.forEach(mails, (mail) =>
    Effect.gen(function*() {
      const rules = analyse(mail.content, mail.subject)
      const markup = readEmail(mail.content)
      const report = yield* (yield* SpamAssassin).check({ subject: mail.subject, content: mail.content, isHtml: markup.isHtml, text: markup.text })
      const spamAssassin = Option.getOrUndefined(report)
      const combined = spamAssassin === undefined ? undefined : withSpamAssassin(rules, spamAssassin, hasSubject(mail.subject))
      return { ...mail, rules, spamAssassin, combined } satisfies ScoredMail
    }), { concurrency: 2 })

/** The lowest ham score and highest spam score (higher is more like ham). */
export const extremes = (scored: ReadonlyArray<{ readonly label: Label; readonly score: number }>) => ({
  minHam: Math.min(...scored.filter((mail) => mail.label === "ham").map((mail) => mail.score)),
  maxSpam: Math.max(...scored.filter((mail) => mail.label === "spam").map((mail) => mail.score))
})
