import phraseData from "./data/spam-phrases.json" with { type: "json" }
import { type Chunk, chunksOf, phraseMatcher } from "./Words.ts"

/**
 * The curated spam trigger phrase list (`data/spam-phrases.json`): categories
 * with a severity, each phrase with the neutral wording the rewriter uses.
 */

export type Severity = "high" | "medium" | "low"

export interface TriggerPhrase {
  readonly phrase: string
  readonly category: string
  readonly severity: Severity
  /** Neutral wording; empty: the phrase is dropped. */
  readonly replacement: string
}

const severities: ReadonlyArray<Severity> = ["high", "medium", "low"]
const asSeverity = (value: string): Severity => severities.find((severity) => severity === value) ?? "medium"

export const triggerPhrases: ReadonlyArray<TriggerPhrase> = Object.entries(phraseData.categories).flatMap((
  [category, { severity, phrases }]
) =>
  Object.entries(phrases).map(([phrase, replacement]) => ({
    phrase,
    category,
    severity: asSeverity(severity),
    replacement
  }))
)

export const triggerPhraseMatcher = phraseMatcher(triggerPhrases, (entry) => entry.phrase)

/** The distinct trigger phrases in chunked text, in order of first appearance. */
export const findTriggerPhrasesIn = (chunks: ReadonlyArray<Chunk>): ReadonlyArray<TriggerPhrase> => [
  ...new Set(triggerPhraseMatcher.find(chunks).map((match) => match.entry))
]

export const findTriggerPhrases = (text: string): ReadonlyArray<TriggerPhrase> => findTriggerPhrasesIn(chunksOf(text))
