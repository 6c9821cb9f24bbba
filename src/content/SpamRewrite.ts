import { mismatchedHosts, readEmail } from "./EmailMarkup.ts"
import { offersUnsubscribe } from "./SpamRules.ts"
import { replaceTriggerPhrases } from "./TriggerPhrases.ts"
import { applyEdits, type Chunk, chunksOf, type Edit, join } from "./Words.ts"

/**
 * The deterministic rewriter: fixes what the rules can fix without knowing
 * the sender's intent. Trigger phrases get neutral wording, shouting becomes
 * sentence case, exclamation marks and emoji are toned down, hidden text is
 * removed, anchor text that names another site shows the real one, images
 * get an (empty) alt, and an unsubscribe line is added when none exists.
 * Markup, merge fields, spintax, URLs and addresses are never changed.
 */

export const unsubscribeLine = "If you would rather not hear from us, reply with “unsubscribe” and we will take you off the list."

const endsSentence = (chunk: Chunk | undefined) => chunk === undefined || /[.!?]["')\]]*$/.test(chunk.suffix)

const isShouted = (core: string) => /^[\p{Lu}\p{N}'-]+$/u.test(core) && (core.match(/\p{Lu}/gu)?.length ?? 0) >= 2

/**
 * Sentence case for shouted words: runs of capitals and single capital words
 * of four letters or more; every capital word when capitals dominate the text.
 */
const unshout = (chunks: ReadonlyArray<Chunk>): Array<Chunk> => {
  const text = join(chunks)
  const letters = text.match(/\p{L}/gu)?.length ?? 0
  const everyWord = letters >= 4 && (text.match(/\p{Lu}/gu)?.length ?? 0) / letters > 0.3
  return chunks.map((chunk, i) => {
    if (chunk.isProtected || !isShouted(chunk.core)) return chunk
    const neighbourShouted = [chunks[i - 1], chunks[i + 1]].some((other) =>
      other !== undefined && !other.isProtected && isShouted(other.core)
    )
    if (!everyWord && !neighbourShouted && (chunk.core.match(/\p{Lu}/gu)?.length ?? 0) < 4) return chunk
    const lower = chunk.core.toLowerCase()
    const core = endsSentence(chunks[i - 1]) ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower
    return { ...chunk, core }
  })
}

/** "!!!" and "?!" become one mark; a lone "!" becomes "."; emoji go. */
const calm = (chunks: ReadonlyArray<Chunk>): Array<Chunk> =>
  chunks.map((chunk) =>
    chunk.isProtected ? { ...chunk, suffix: chunk.suffix.replace(/(?<=\}\})[!?]+$/, (marks) => (marks.includes("?") ? "?" : ".")) } : {
      ...chunk,
      prefix: chunk.prefix.replace(/\p{Extended_Pictographic}\uFE0F?/gu, ""),
      core: chunk.core.replace(/\p{Extended_Pictographic}\uFE0F?/gu, ""),
      suffix: chunk.suffix.replace(/[!?]+/g, (marks) => (marks.includes("?") ? "?" : ".")).replace(/\p{Extended_Pictographic}\uFE0F?/gu, "")
    }
  )

const tidy = (text: string) => join(calm(unshout(chunksOf(replaceTriggerPhrases(text)))))

/** A subject rewritten by the same rules, without a fake Re:/Fwd:, and cut to 60 characters at a word. */
export const improveSubject = (subject: string): string => {
  const text = tidy(subject.replace(/^\s*(?:re|fwd?)\s*:\s*/i, "")).replace(/[$€£]/g, "").replace(/\s{2,}/g, " ").trim()
  const cut = text.length <= 60 ? text : text.slice(0, text.lastIndexOf(" ", 60) > 20 ? text.lastIndexOf(" ", 60) : 60)
  const sentence = cut.replace(/[.,;:]+$/, "")
  return sentence.charAt(0).toUpperCase() + sentence.slice(1)
}

/** The body rewritten: visible text only, plus the few markup fixes listed above. */
export const improveContent = (content: string): string => {
  const markup = readEmail(content)
  const edits: Array<Edit> = [
    ...markup.textRanges.map(([start, end]) => ({ start, end, text: tidy(content.slice(start, end)) })),
    ...markup.hiddenRanges.map(([start, end]) => ({ start, end, text: "" })),
    ...markup.images.filter((image) => image.alt === undefined).map((image) => ({
      start: image.attributesAt,
      end: image.attributesAt,
      text: " alt=\"\""
    }))
  ]
  const rewritten = applyEdits(content, edits)
  const linksFixed = markup.isHtml ? showRealHosts(rewritten) : rewritten
  if (offersUnsubscribe(markup, content)) return linksFixed
  if (!markup.isHtml) return `${linksFixed.trimEnd()}\n\n${unsubscribeLine}\n`
  const bodyEnd = linksFixed.toLowerCase().lastIndexOf("</body>")
  const footer = `<p>${unsubscribeLine}</p>`
  return bodyEnd < 0 ? `${linksFixed}\n${footer}` : `${linksFixed.slice(0, bodyEnd)}${footer}\n${linksFixed.slice(bodyEnd)}`
}

/** Anchor text that reads as another site's address is replaced by the link's real host. */
const showRealHosts = (content: string): string =>
  applyEdits(
    content,
    readEmail(content).links.flatMap((link) => {
      const mismatch = mismatchedHosts(link)
      const [start, end] = link.textRange
      return mismatch !== undefined && content.slice(start, end).trim() === link.text
        ? [{ start, end, text: mismatch.real }]
        : []
    })
  )
