import { readEmail } from "./EmailMarkup.ts"
import { isRiskyLink, offersUnsubscribe } from "./SpamRules.ts"
import { type TriggerPhrase, triggerPhraseMatcher } from "./TriggerPhrases.ts"
import { applyEdits, type Chunk, chunksOf, type Edit } from "./Words.ts"

/**
 * The deterministic rewriter: it fixes what the rules can fix without
 * knowing the sender's intent, and edits only at phrase and sentence
 * boundaries so that what it leaves reads as the sender wrote it. A sentence
 * that carries a risky link (URL shortener, raw IP address, deceptive host,
 * text naming another site) or a scam, pressure or hype phrase that has no
 * neutral wording of the same kind goes whole, the link element with it.
 * Phrases that have such a wording ("limited time offer" → "offer", "Dear
 * customer" → "Hello") take it; shouting becomes sentence case, "!!!" one
 * mark and a lone "!" a full stop, emoji and hidden text go, images get an
 * (empty) alt, and an unsubscribe line is added when there is none. Markup,
 * merge fields, spintax, URLs of kept links and addresses never change.
 */

export const unsubscribeLine = "If you would rather not hear from us, reply with “unsubscribe” and we will take you off the list."

/** A chunk of visible text with its source range `[at, end)`. */
interface Placed {
  readonly chunk: Chunk
  readonly at: number
  readonly end: number
}

const lengthOf = (chunk: Chunk) => chunk.prefix.length + chunk.core.length + chunk.suffix.length + chunk.space.length
const textOf = (chunk: Chunk) => chunk.prefix + chunk.core + chunk.suffix + chunk.space
/** Words whose full stop is an abbreviation's, not a sentence's end. */
const abbreviations: ReadonlySet<string> = new Set([
  "mr", "mrs", "ms", "dr", "prof", "st", "no", "nr", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co", "jr", "sr", "esq", "dept", "approx", "fig", "p.s"
])
const endsSentence = (chunk: Chunk) =>
  chunk.space.includes("\n") ||
  (/[.!?]["')\]]*$/.test(chunk.suffix) && !(chunk.suffix === "." && (abbreviations.has(chunk.core.toLowerCase()) || /^\p{Lu}$/u.test(chunk.core))))

/** Markup between two pieces of text that starts a new block (so a new sentence). */
const blockBoundary = /<\/?(?:p|div|br|li|ul|ol|h[1-6]|table|tbody|tr|td|th|center|blockquote|hr|section|article|header|footer)\b/i

/** The visible text's chunks with their source offsets, grouped into sentences (a block boundary also ends one). */
const sentencesOf = (content: string, ranges: ReadonlyArray<readonly [number, number]>): Array<Array<Placed>> => {
  const sentences: Array<Array<Placed>> = []
  let current: Array<Placed> = []
  let previousEnd = -1
  for (const [start, end] of ranges) {
    if (previousEnd >= 0 && current.length > 0 && blockBoundary.test(content.slice(previousEnd, start))) {
      sentences.push(current)
      current = []
    }
    let at = start
    for (const chunk of chunksOf(content.slice(start, end))) {
      current.push({ chunk, at, end: at + lengthOf(chunk) })
      at += lengthOf(chunk)
      if (endsSentence(chunk)) {
        sentences.push(current)
        current = []
      }
    }
    previousEnd = end
  }
  if (current.length > 0) sentences.push(current)
  return sentences
}

/** A phrase that takes its sentence with it: a scam, pressure or hype phrase with no neutral wording of the same kind. */
const dropsSentence = (phrase: TriggerPhrase) => phrase.replacement.length === 0 && phrase.severity !== "low"

const isShouted = (core: string) => /^[\p{Lu}\p{N}'-]+$/u.test(core) && (core.match(/\p{Lu}/gu)?.length ?? 0) >= 2
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
const emoji = /\p{Extended_Pictographic}\uFE0F?/gu

/**
 * Sentence case: shouted words (runs of capitals, single words of four
 * capitals or more, every capital word when capitals dominate; short
 * acronyms such as "SEO" stay unless capitals dominate) in lower case, and
 * the sentence's first word capitalised.
 */
const sentenceCase = (chunks: ReadonlyArray<Chunk>, everyWord: boolean): Array<Chunk> => {
  const firstWord = chunks.findIndex((chunk) => /[\p{L}\p{N}]/u.test(chunk.core))
  return chunks.map((chunk, i) => {
    if (chunk.isProtected) return chunk
    const neighbourShouted = [chunks[i - 1], chunks[i + 1]].some((other) => other !== undefined && !other.isProtected && isShouted(other.core))
    const capitals = chunk.core.match(/\p{Lu}/gu)?.length ?? 0
    const shouted = isShouted(chunk.core) && (everyWord || (capitals >= 4 || (neighbourShouted && chunk.core.length > 3)))
    const core = shouted ? chunk.core.toLowerCase() : chunk.core
    return { ...chunk, core: i === firstWord ? capitalised(core) : core }
  })
}

/** "!!!" and "?!" become one mark, a lone "!" a full stop; emoji go. */
const calm = (chunk: Chunk): Chunk =>
  chunk.isProtected ? { ...chunk, suffix: chunk.suffix.replace(/(?<=\}\})[!?]+$/, (marks) => (marks.includes("?") ? "?" : ".")) } : {
    ...chunk,
    prefix: chunk.prefix.replace(emoji, ""),
    core: chunk.core.replace(emoji, ""),
    suffix: chunk.suffix.replace(/[!?]+/g, (marks) => (marks.includes("?") ? "?" : ".")).replace(emoji, "")
  }

/** Phrases with a neutral wording take it: capitalised where the sentence starts, in lower case elsewhere. */
const reword = (sentence: ReadonlyArray<Placed>): Array<Placed> => {
  const chunks = sentence.map((placed) => placed.chunk)
  const output: Array<Placed> = []
  let position = 0
  for (const match of triggerPhraseMatcher.find(chunks)) {
    if (match.entry.replacement.length === 0) continue
    for (let i = position; i < match.start; i++) output.push(sentence[i]!)
    const first = chunks[match.start]!
    const last = chunks[match.end - 1]!
    const core = match.start === 0 ? capitalised(match.entry.replacement) : match.entry.replacement
    output.push({
      at: sentence[match.start]!.at,
      end: sentence[match.end - 1]!.end,
      chunk: { prefix: first.prefix, core, suffix: last.suffix, space: last.space, isProtected: false }
    })
    position = match.end
  }
  for (let i = position; i < sentence.length; i++) output.push(sentence[i]!)
  return output
}

/**
 * The edits that rewrite the visible text: each sentence is dropped, or
 * reworded, unshouted and calmed in place (a reworded phrase replaces the
 * source of all its chunks).
 */
const textEdits = (content: string, ranges: ReadonlyArray<readonly [number, number]>, risky: (start: number, end: number) => boolean) => {
  const visible = ranges.map(([start, end]) => content.slice(start, end)).join(" ")
  const letters = visible.match(/\p{L}/gu)?.length ?? 0
  const everyWord = letters >= 4 && (visible.match(/\p{Lu}/gu)?.length ?? 0) / letters > 0.3
  const edits: Array<Edit> = []
  for (const sentence of sentencesOf(content, ranges)) {
    const phrases = triggerPhraseMatcher.find(sentence.map((placed) => placed.chunk))
    if (risky(sentence[0]!.at, sentence[sentence.length - 1]!.end) || phrases.some((match) => dropsSentence(match.entry))) {
      // Chunk by chunk, so markup between them stays balanced; line breaks stay, so paragraphs keep their shape.
      for (const placed of sentence) edits.push({ start: placed.at, end: placed.end, text: placed.chunk.space.replace(/[^\n]/g, "") })
      continue
    }
    const reworded = reword(sentence)
    const rewritten = sentenceCase(reworded.map((placed) => placed.chunk).map(calm), everyWord)
    reworded.forEach((placed, i) => {
      const text = textOf(rewritten[i]!)
      if (text !== content.slice(placed.at, placed.end)) edits.push({ start: placed.at, end: placed.end, text })
    })
  }
  return edits
}

/** Plain text tidied after sentences went: no trailing spaces, at most one blank line in a row. */
const tidyLines = (text: string) => text.replace(/[ \t]+(?=\n|$)/g, "").replace(/\n{3,}/g, "\n\n").replace(/^\n+/, "")

/** The body rewritten: visible text only, plus the few markup fixes listed above. */
export const improveContent = (content: string): string => {
  const markup = readEmail(content)
  const riskyLinks = markup.links.filter(isRiskyLink)
  const risky = (start: number, end: number) =>
    riskyLinks.some((link) => link.textRange[0] < end && link.textRange[1] > start && link.textRange[1] > link.textRange[0])
  const edits: Array<Edit> = [
    ...riskyLinks.flatMap((link) => (link.elementRange === undefined ? [] : [{ start: link.elementRange[0], end: link.elementRange[1], text: "" }])),
    ...textEdits(content, markup.textRanges, risky),
    ...markup.hiddenRanges.map(([start, end]) => ({ start, end, text: "" })),
    ...markup.images.filter((image) => image.alt === undefined).map((image) => ({ start: image.attributesAt, end: image.attributesAt, text: " alt=\"\"" }))
  ]
  const rewritten = markup.isHtml ? applyEdits(content, edits) : tidyLines(applyEdits(content, edits))
  if (offersUnsubscribe(markup, content)) return rewritten
  if (!markup.isHtml) return `${rewritten.trimEnd()}\n\n${unsubscribeLine}\n`
  const bodyEnd = rewritten.toLowerCase().lastIndexOf("</body>")
  const footer = `<p>${unsubscribeLine}</p>`
  return bodyEnd < 0 ? `${rewritten}\n${footer}` : `${rewritten.slice(0, bodyEnd)}${footer}\n${rewritten.slice(bodyEnd)}`
}

/** At most this many characters of subject (clients cut longer ones). */
const subjectLength = 60

/** Words a cut subject must not end on: it would read unfinished. */
const danglingWord = /\s+(?:a|an|the|of|to|from|for|with|and|or|in|on|at|by|as|your|our|their|my|its|this|that)$/i

const cutAtWord = (text: string) => {
  if (text.length <= subjectLength) return text
  const space = text.lastIndexOf(" ", subjectLength)
  let cut = text.slice(0, space > 20 ? space : subjectLength).replace(/[\s,;:-]+$/, "")
  while (danglingWord.test(cut)) cut = cut.replace(danglingWord, "")
  return cut
}

/**
 * A subject rewritten by the same rules, without a fake Re:/Fwd:, cut to 60
 * characters at a word. When nothing of it survives, the first sentence of
 * the improved body stands in.
 */
export const improveSubject = (subject: string, improvedContent: string): string => {
  const text = subject.replace(/^\s*(?:re|fwd?)\s*:\s*/i, "")
  const rewritten = applyEdits(text, textEdits(text, [[0, text.length]], () => false)).replace(/\s+/g, " ").trim()
  // The body's first line that reads as a sentence: not a greeting or sign-off, no link, not the unsubscribe line.
  const sentence = readEmail(improvedContent).text.split("\n").map((line) => line.trim())
    .find((line) => /[.!?]$/.test(line) && line !== unsubscribeLine && !/https?:|www\./i.test(line))
  const chosen = rewritten.length > 0 ? rewritten : sentence ?? ""
  return capitalised(cutAtWord(chosen).replace(/[.,;:]+$/, ""))
}
