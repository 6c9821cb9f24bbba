import phraseData from "./data/spam-phrases.json" with { type: "json" }
import { type Chunk, chunksOf, join, phraseMatcher } from "./Words.ts"

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

const matcher = phraseMatcher(triggerPhrases, (entry) => entry.phrase)

/** The distinct trigger phrases in chunked text, in order of first appearance. */
export const findTriggerPhrasesIn = (chunks: ReadonlyArray<Chunk>): ReadonlyArray<TriggerPhrase> => [
  ...new Set(matcher.find(chunks).map((match) => match.entry))
]

export const findTriggerPhrases = (text: string): ReadonlyArray<TriggerPhrase> => findTriggerPhrasesIn(chunksOf(text))

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)
const endsSentence = (chunk: Chunk | undefined) => chunk === undefined || /[.!?:]["')\]]*$/.test(chunk.suffix) || chunk.space.includes("\n")

/**
 * Puts each trigger phrase's neutral wording in its place, or drops it with
 * its punctuation and the space after it. Wording starts with a capital where
 * a sentence starts, in lower case elsewhere (never shouted). Merge fields,
 * spintax, URLs and addresses are left alone.
 */
export const replaceTriggerPhrases = (text: string): string => {
  const chunks = chunksOf(text)
  const output: Array<Chunk> = []
  let position = 0
  for (const match of matcher.find(chunks)) {
    for (let i = position; i < match.start; i++) output.push(chunks[i]!)
    const first = chunks[match.start]!
    const last = chunks[match.end - 1]!
    const startsSentence = endsSentence(output[output.length - 1])
    position = match.end
    if (match.entry.replacement.length > 0) {
      const core = startsSentence ? capitalised(match.entry.replacement) : match.entry.replacement
      output.push({ prefix: first.prefix, core, suffix: last.suffix, space: last.space, isProtected: false })
      continue
    }
    // Dropped: a sentence end it carried moves to the word before; a sentence start moves to the word after.
    const previous = output[output.length - 1]
    if (/[.!?]/.test(last.suffix) && previous !== undefined && !endsSentence(previous)) {
      output[output.length - 1] = { ...previous, suffix: previous.suffix.replace(/[,;]$/, "") + "." }
    }
    const next = chunks[position]
    if (next !== undefined && !next.isProtected && startsSentence) chunks[position] = { ...next, core: capitalised(next.core) }
  }
  for (let i = position; i < chunks.length; i++) output.push(chunks[i]!)
  return join(output)
}
