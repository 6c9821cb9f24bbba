// `npm run bench:spam`: the spam check against SpamAssassin on the labelled
// corpus of test/fixtures/spam-corpus (calibration set and held-out set).
// Each mail is scored by this project's rules, by SpamAssassin with local
// rules only (no network tests, no Bayes; a throwaway spamd, or
// SPAMASSASSIN_URL), and by the rules with SpamAssassin as one more metric.
// Reports each system's ROC AUC, how often the two agree on spam or not
// (rules: score below 70; SpamAssassin: its score at or above 5), and the
// lowest ham and highest spam score.
import { Console, Effect, Option } from "effect"
import { SpamAssassin } from "../src/work/content/SpamAssassin.ts"
import { ContentConfig } from "../src/work/content/ContentConfig.ts"
import { extremes, readCorpus, rocAuc, type ScoredMail, scoreCorpus } from "../test/work/content/SpamCorpus.ts"
import { spamAssassinAvailable, startSpamd } from "../test/work/content/Spamd.ts"
import { fixed, formatTable, writeResults } from "./bench/report.ts"

/** Below this the spam check calls a mail spam (it then proposes a rewrite). */
const rulesThreshold = 70

const startedAt = new Date()
const spamd = spamAssassinAvailable() ? await startSpamd() : undefined
if (spamd === undefined) console.log("SpamAssassin (spamd) is not installed: only the rules are measured.")

const summarise = (part: string, mails: ReadonlyArray<ScoredMail>) => {
  const rules = mails.map((mail) => ({ label: mail.label, score: mail.rules.overallScore }))
  const assassin = mails.flatMap((mail) => mail.spamAssassin === undefined ? [] : [{ label: mail.label, score: -mail.spamAssassin.score, required: mail.spamAssassin.required }])
  const combined = mails.flatMap((mail) => mail.combined === undefined ? [] : [{ label: mail.label, score: mail.combined.overallScore }])
  const correct = (isSpam: (index: number) => boolean) => mails.filter((mail, i) => isSpam(i) === (mail.label === "spam")).length
  const rulesSpam = (i: number) => mails[i]!.rules.overallScore < rulesThreshold
  const assassinSpam = (i: number) => (mails[i]!.spamAssassin?.score ?? 0) >= (mails[i]!.spamAssassin?.required ?? 5)
  const agree = assassin.length === mails.length ? mails.filter((_, i) => rulesSpam(i) === assassinSpam(i)).length : undefined
  return {
    part,
    mails: mails.length,
    rules: { auc: rocAuc(rules), correct: correct(rulesSpam), ...extremes(rules) },
    spamAssassin: assassin.length === 0 ? undefined : { auc: rocAuc(assassin), correct: correct(assassinSpam), ...extremes(assassin) },
    combined: combined.length === 0 ? undefined : { auc: rocAuc(combined), correct: correct((i) => mails[i]!.combined!.overallScore < rulesThreshold), ...extremes(combined) },
    agreement: agree
  }
}

const program = Effect.gen(function*() {
  const results = []
  for (const part of ["calibration", "holdout"] as const) {
    const mails = yield* scoreCorpus(readCorpus(part))
    yield* Console.log(`\n${part}: ${mails.length} mails\n`)
    yield* Console.log(formatTable(
      ["mail", "rules", "SpamAssassin", "combined"],
      mails.map((mail) => [mail.name, String(mail.rules.overallScore), mail.spamAssassin === undefined ? "-" : fixed(mail.spamAssassin.score), mail.combined === undefined ? "-" : String(mail.combined.overallScore)])
    ))
    results.push(summarise(part, mails))
  }
  yield* Console.log(`\n${formatTable(
    ["set", "system", "ROC AUC", "right", "min ham", "max spam", "agreement"],
    results.flatMap((result) => [
      [result.part, "rules", fixed(result.rules.auc, 3), `${result.rules.correct}/${result.mails}`, String(result.rules.minHam), String(result.rules.maxSpam), "-"],
      ...(result.spamAssassin === undefined ? [] : [[result.part, "SpamAssassin", fixed(result.spamAssassin.auc, 3), `${result.spamAssassin.correct}/${result.mails}`, fixed(-result.spamAssassin.minHam), fixed(-result.spamAssassin.maxSpam), `${result.agreement}/${result.mails}`]]),
      ...(result.combined === undefined ? [] : [[result.part, "rules + SpamAssassin", fixed(result.combined.auc, 3), `${result.combined.correct}/${result.mails}`, String(result.combined.minHam), String(result.combined.maxSpam), "-"]])
    ])
  )}`)
  yield* Console.log(`\nFor SpamAssassin (higher is spam) the two columns are its own scores, the worst cases the same way round: its highest on a ham, its lowest on a spam. Results: ${writeResults("spam", startedAt, results)}`)
}).pipe(
  Effect.provide(SpamAssassin.layer),
  Effect.provide(ContentConfig.layerWith({ spamAssassinUrl: Option.fromUndefinedOr(spamd?.url) })),
  Effect.ensuring(Effect.sync(() => spamd?.stop()))
)

await Effect.runPromise(program)
