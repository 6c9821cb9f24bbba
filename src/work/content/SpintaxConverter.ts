import { Result } from "effect"
import emailPhrases from "./data/email-phrases.json" with { type: "json" }
import synonymTable from "./data/synonyms.json" with { type: "json" }
import { readEmail } from "./EmailMarkup.ts"
import { countVariants, parse } from "./Spintax.ts"
import { lexiconTags, partOfSpeechTags } from "./PartOfSpeech.ts"
import { applyEdits, type Chunk, chunksOf, join, type PhraseMatch, phraseMatcher, withCaseOf } from "./Words.ts"

/**
 * The offline spintax converter: wraps interchangeable wording in
 * `{{RANDOM | original | alternative…}}` groups. Whole e-mail phrases
 * (greetings, openers, calls to action, sign-offs) come first from a curated
 * list; single words come from a WordNet-derived synonym table (same part of
 * speech, dominant sense, common words: scripts/build-synonyms.ts). Only the
 * visible text is touched: markup, attributes, merge fields, existing
 * spintax, URLs, e-mail addresses and anything with a digit stay as they are.
 */

export type PartOfSpeech = "noun" | "verb" | "adjective" | "adverb"

export interface Variation {
  /** Lowercase words, as matched. */
  readonly phrase: string
  readonly alternatives: ReadonlyArray<string>
  readonly kind: string
  /** A single word varied only where the tagger reads it as this part of speech (and inflection: base forms only). */
  readonly partOfSpeech?: PartOfSpeech
}

/** At most this many alternatives besides the original in one group. */
export const maxAlternatives = 3

/** The pronoun "I" is written in capitals wherever a phrase puts it. */
const capitalI = (phrase: string) => phrase.replace(/\bi\b/g, "I")

const partsOfSpeech: ReadonlyArray<PartOfSpeech> = ["noun", "verb", "adjective", "adverb"]
const asPartOfSpeech = (name: string) => partsOfSpeech.find((part) => part === name)

/** Each phrase of each set, with the others as alternatives; a phrase heading its set comes before its other uses. */
const curated: ReadonlyArray<Variation> = Object.entries(emailPhrases.sets).flatMap(([kind, sets]) =>
  sets.flatMap((set) =>
    set.map((phrase, i) => {
      const partOfSpeech = asPartOfSpeech(kind)
      return {
        phrase,
        kind,
        heads: i === 0,
        alternatives: set.filter((_, j) => j !== i).slice(0, maxAlternatives).map(capitalI),
        ...(partOfSpeech === undefined ? {} : { partOfSpeech })
      }
    })
  )
).sort((a, b) => Number(b.heads) - Number(a.heads)).map(({ heads: _, ...variation }) => variation)

const synonyms: ReadonlyArray<Variation> = Object.entries(synonymTable).flatMap(([word, entry]) => {
  const partOfSpeech = asPartOfSpeech(entry.partOfSpeech)
  return partOfSpeech === undefined ? [] : [{ phrase: word, kind: "word", partOfSpeech, alternatives: entry.synonyms.slice(0, maxAlternatives) }]
})

export interface ConvertOptions {
  /** Also vary every eligible single word, not just one per sentence. */
  readonly aggressive: boolean
  /** Extra variations (a model's, already validated), preferred over the built-in ones. */
  readonly proposed?: ReadonlyArray<Variation>
}

export interface Converted {
  readonly text: string
  /** The variations applied, in order. */
  readonly applied: ReadonlyArray<Variation>
}

const curatedMatcher = phraseMatcher(curated, (entry) => entry.phrase)
const synonymMatcher = phraseMatcher(synonyms, (entry) => entry.phrase)

const hasDigit = (chunk: Chunk) => /\p{N}/u.test(chunk.core)
const endsSentence = (chunk: Chunk) => /[.!?:]/.test(chunk.suffix) || chunk.space.includes("\n")
const startsSentence = (chunks: ReadonlyArray<Chunk>, i: number) => i === 0 || endsSentence(chunks[i - 1]!)
/** A sign-off or sentence adverb stands alone: a comma, full stop or line end follows it. */
const standsAlone = (chunk: Chunk) => /^[,.!]/.test(chunk.suffix) || chunk.space.includes("\n")

/** Where each kind of phrase may be varied: greetings open a sentence; sign-offs and sentence adverbs open one and stand alone. */
const fitsPosition = (kind: string, chunks: ReadonlyArray<Chunk>, match: PhraseMatch<Variation>) => {
  switch (kind) {
    case "greeting":
      return startsSentence(chunks, match.start)
    case "sign-off":
    case "sentence adverb":
      return startsSentence(chunks, match.start) && (match.end === chunks.length || standsAlone(chunks[match.end - 1]!))
    default:
      return true
  }
}

/** Penn Treebank tags of the base forms a table word may stand in (its alternatives are base forms too). */
const baseFormTags: Record<PartOfSpeech, ReadonlyArray<string>> = {
  noun: ["NN"],
  verb: ["VB", "VBP"],
  adjective: ["JJ"],
  adverb: ["RB"]
}

/** After "a" or "an", an alternative must take the same article (its first letter a vowel or not, like the original's). */
const agreesWithArticle = (article: string | undefined, original: string, alternative: string) => {
  if (article !== "a" && article !== "an") return true
  const vowel = (word: string) => /^[aeiou]/i.test(word)
  return vowel(original) === vowel(alternative)
}

/** Tags chunk i with the Penn Treebank tag of its word in its sentence; each sentence is tagged once, when first asked. */
const sentenceTagger = (chunks: ReadonlyArray<Chunk>) => {
  const starts: Array<number> = []
  for (let i = 0; i < chunks.length; i++) starts.push(startsSentence(chunks, i) ? i : starts[i - 1]!)
  const tagged = new Map<number, ReadonlyArray<string>>()
  return (i: number): string => {
    const start = starts[i]!
    let sentence = tagged.get(start)
    if (sentence === undefined) {
      let end = i + 1
      while (end < chunks.length && starts[end] === start) end += 1
      // The capital that opens a sentence is no sign of a proper noun.
      sentence = partOfSpeechTags(chunks.slice(start, end).map((chunk, k) => (k === 0 ? chunk.core.toLowerCase() : chunk.core)))
      tagged.set(start, sentence)
    }
    return sentence[i - start] ?? ""
  }
}

/** Converts plain text (one visible-text range of a body, or a subject). */
const convertText = (text: string, options: ConvertOptions, applied: Array<Variation>): string => {
  const chunks = chunksOf(text).map((chunk) => (hasDigit(chunk) ? { ...chunk, isProtected: true } : chunk))
  const matcher = options.proposed === undefined || options.proposed.length === 0
    ? curatedMatcher
    : phraseMatcher([...options.proposed, ...curated], (entry) => entry.phrase)
  const tags = sentenceTagger(chunks)
  /** Is chunk i this part of speech in a base form: always, by the lexicon, or here, by tagging its sentence? */
  const readAs = (partOfSpeech: PartOfSpeech, i: number) => {
    const allowed = baseFormTags[partOfSpeech]
    const possible = lexiconTags(chunks[i]!.core)
    const always = possible !== undefined && possible.length > 0 && possible.every((tag) => allowed.includes(tag))
    return always || allowed.includes(tags(i))
  }
  /** The match with only the alternatives that fit where it stands; `undefined` when none does. */
  const fitted = (match: PhraseMatch<Variation>): PhraseMatch<Variation> | undefined => {
    const entry = match.entry
    if (!fitsPosition(entry.kind, chunks, match)) return undefined
    if (entry.partOfSpeech !== undefined && !readAs(entry.partOfSpeech, match.start)) return undefined
    const article = match.start === 0 ? undefined : chunks[match.start - 1]!.core.toLowerCase()
    const alternatives = entry.alternatives.filter((alternative) => agreesWithArticle(article, entry.phrase, alternative))
    return alternatives.length === 0 ? undefined : { ...match, entry: { ...entry, alternatives } }
  }
  const phrases = matcher.find(chunks).flatMap((match) => fitted(match) ?? [])
  const words = synonymMatcher.find(chunks)
  const taken = new Set<number>()
  const matches = [...phrases]
  for (const match of phrases) for (let i = match.start; i < match.end; i++) taken.add(i)
  let wordInSentence = false
  let nextWord = 0
  for (let i = 0; i < chunks.length; i++) {
    const word = words[nextWord]
    if (word !== undefined && word.start === i) {
      nextWord += 1
      const fitting = taken.has(i) || (!options.aggressive && wordInSentence) ? undefined : fitted(word)
      if (fitting !== undefined) {
        matches.push(fitting)
        wordInSentence = true
      }
    }
    if (endsSentence(chunks[i]!)) wordInSentence = false
  }
  matches.sort((a, b) => a.start - b.start)
  const output: Array<Chunk> = []
  let position = 0
  for (const match of matches) {
    for (let i = position; i < match.start; i++) output.push(chunks[i]!)
    const first = chunks[match.start]!
    const last = chunks[match.end - 1]!
    const original = join(chunks.slice(match.start, match.end).map((chunk, i, all) => ({
      ...chunk,
      prefix: i === 0 ? "" : chunk.prefix,
      suffix: i === all.length - 1 ? "" : chunk.suffix,
      space: i === all.length - 1 ? "" : chunk.space
    })))
    const options = [original, ...match.entry.alternatives.map((alternative) => withCaseOf(original, alternative))]
    output.push({
      prefix: first.prefix,
      core: `{{RANDOM | ${options.join(" | ")}}}`,
      suffix: last.suffix,
      space: last.space,
      isProtected: true
    })
    applied.push(match.entry)
    position = match.end
  }
  for (let i = position; i < chunks.length; i++) output.push(chunks[i]!)
  return join(output)
}

/** Converts a body (plain text or HTML, visible text only) or a subject. */
export const convert = (content: string, options: ConvertOptions): Converted => {
  const applied: Array<Variation> = []
  const markup = readEmail(content)
  const text = applyEdits(
    content,
    markup.textRanges.map(([start, end]) => ({ start, end, text: convertText(content.slice(start, end), options, applied) }))
  )
  return { text, applied }
}

/** Variants of a converted text; 1 when it does not parse (it always does: groups are only added around plain words). */
export const variantsOf = (text: string): number => {
  const parsed = parse(text)
  return Result.isSuccess(parsed) ? countVariants(parsed.success) : 1
}
