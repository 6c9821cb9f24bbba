import type { SpamAssassinReport } from "./SpamAssassin.ts"

/**
 * How the spam check's metrics make one score: shortfalls add up (a mail
 * bad in two areas is worse than one bad in one), one disastrous metric caps
 * the whole, and SpamAssassin, when configured, is one more metric.
 */

export interface Metric {
  readonly name: string
  readonly score: number
  readonly description: string
  readonly issues: ReadonlyArray<string>
  readonly suggestions: ReadonlyArray<string>
}

export type Verdict = "excellent" | "good" | "average" | "poor" | "spam"

export interface SpamAnalysis {
  readonly overallScore: number
  readonly verdict: Verdict
  readonly metrics: ReadonlyArray<Metric>
  readonly spamWordsFound: ReadonlyArray<string>
  readonly summary: string
}

/**
 * Metric weights (sum 100, 120 with SpamAssassin). Without a subject the
 * subject metric is reported but weighs nothing; SpamAssassin is there only
 * when it is configured.
 */
export const weights = {
  "Subject line": 15,
  "Trigger phrases": 20,
  "Formatting": 15,
  "Links": 15,
  "Images": 10,
  "Compliance": 10,
  "Length": 10,
  "Personalisation": 5,
  "SpamAssassin": 20
} as const

export type MetricName = keyof typeof weights

export interface WeighedMetric extends Metric {
  readonly name: MetricName
}

export const quoted = (text: string) => `“${text}”`
export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

export const verdictThresholds: ReadonlyArray<readonly [Verdict, number]> = [
  ["excellent", 90],
  ["good", 75],
  ["average", 60],
  ["poor", 40],
  ["spam", 0]
]

/** One very bad metric drags the whole down: the overall never exceeds the lowest metric plus this. */
export const lowestMetricAllowance = 40

/** Shortfalls add up: the overall loses this many times the weighted mean of what the metrics lost. */
export const shortfallFactor = 3

const verdictOf = (score: number): Verdict => verdictThresholds.find(([, minimum]) => score >= minimum)![0]

const summaryOf = (overall: number, verdict: Verdict, metrics: ReadonlyArray<Metric>, phrases: ReadonlyArray<string>) => {
  const weakest = [...metrics].filter((metric) => metric.score < 80).sort((a, b) => a.score - b.score).slice(0, 3)
  const sentences = [`Deliverability score ${overall}/100 (${verdict}).`]
  if (weakest.length === 0) sentences.push("Every area looks healthy.")
  else {
    sentences.push(`Weakest: ${weakest.map((metric) => `${metric.name.toLowerCase()} (${metric.score}: ${metric.issues[0] ?? "minor issues"})`).join("; ")}.`)
  }
  if (phrases.length > 0) sentences.push(`${plural(phrases.length, "trigger phrase")} found: ${phrases.slice(0, 8).map(quoted).join(", ")}${phrases.length > 8 ? "…" : ""}.`)
  const advice = weakest.flatMap((metric) => metric.suggestions).slice(0, 2)
  if (advice.length > 0) sentences.push(`First fixes: ${advice.join(" ")}`)
  return sentences.join(" ")
}

export const hasSubject = (subject: string | undefined) => subject !== undefined && subject.trim().length > 0

/** The overall score, verdict and summary of a set of metrics. */
export const scoreMetrics = (metrics: ReadonlyArray<WeighedMetric>, withSubject: boolean, spamWordsFound: ReadonlyArray<string>): SpamAnalysis => {
  const weighed = metrics.filter((metric) => withSubject || metric.name !== "Subject line")
  const totalWeight = weighed.reduce((sum, metric) => sum + weights[metric.name], 0)
  const shortfall = weighed.reduce((sum, metric) => sum + (100 - metric.score) * weights[metric.name], 0) / totalWeight
  const lowest = Math.min(...weighed.map((metric) => metric.score))
  const overallScore = Math.round(Math.max(0, Math.min(100 - shortfallFactor * shortfall, lowest + lowestMetricAllowance)))
  const verdict = verdictOf(overallScore)
  return { overallScore, verdict, metrics, spamWordsFound, summary: summaryOf(overallScore, verdict, metrics, spamWordsFound) }
}

/** Points the SpamAssassin metric loses per point of SpamAssassin score above zero. */
export const spamAssassinPointValue = 10

/** SpamAssassin's report as a metric: its score above zero costs ${spamAssassinPointValue} points per point; the rules that fired are the issues. */
export const spamAssassinMetric = (report: SpamAssassinReport): WeighedMetric => ({
  name: "SpamAssassin",
  score: Math.max(0, Math.min(100, Math.round(100 - spamAssassinPointValue * Math.max(0, report.score)))),
  description: `SpamAssassin's score with local rules only: ${report.score} (${report.required} or more is spam there).`,
  issues: report.rules.filter((rule) => rule.points > 0).map((rule) => `${rule.name} (${rule.points}): ${rule.description}`),
  suggestions: report.score >= report.required ? ["Fix what SpamAssassin's rules name above."] : []
})

/** The analysis with SpamAssassin's report as one more metric, the overall score recomputed. */
export const withSpamAssassin = (analysis: SpamAnalysis, report: SpamAssassinReport, withSubject: boolean): SpamAnalysis =>
  scoreMetrics([...analysis.metrics.filter(isWeighed), spamAssassinMetric(report)], withSubject, analysis.spamWordsFound)

const isWeighed = (metric: Metric): metric is WeighedMetric => Object.hasOwn(weights, metric.name)
