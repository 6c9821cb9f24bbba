/**
 * The word model the content tools share: text is split on whitespace into
 * chunks ("Free!", "{{firstName}},", "https://x.io"), each chunk into the
 * punctuation around it and its core. Phrases are matched on the lowercased
 * cores of consecutive chunks, so they always match whole words. Every step
 * is one pass over the text: no backtracking regular expressions.
 */

export interface Chunk {
  /** Punctuation before the core (`"(`). */
  readonly prefix: string
  readonly core: string
  /** Punctuation after the core (`!),`). */
  readonly suffix: string
  /** Whitespace after the chunk, kept verbatim. */
  readonly space: string
  /** Merge fields, spintax, URLs, e-mail addresses: never matched, never changed. */
  readonly isProtected: boolean
}

const leading = /[\p{L}\p{N}$#€£]/u
const trailing = /[\p{L}\p{N}%$€£]/u

const isAsciiAlphanumeric = (code: number) => (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)

/** ASCII decided by code (the common case, and the hot loop of every content tool); the rest by Unicode class. */
const startsCore = (char: string) => {
  const code = char.charCodeAt(0)
  return code < 128 ? isAsciiAlphanumeric(code) || code === 36 || code === 35 : leading.test(char)
}
const endsCore = (char: string) => {
  const code = char.charCodeAt(0)
  return code < 128 ? isAsciiAlphanumeric(code) || code === 37 || code === 36 : trailing.test(char)
}

const isUrlOrAddress = (chunk: string) =>
  chunk.includes("://") || chunk.includes("@") || (chunk.length > 4 && chunk.slice(0, 4).toLowerCase() === "www.")

const occurrences = (text: string, search: string) => (text.includes(search) ? text.split(search).length - 1 : 0)

/** Splits text into chunks; `join(chunks)` gives the text back exactly. */
export const chunksOf = (text: string): Array<Chunk> => {
  const chunks: Array<Chunk> = []
  const pieces = text.split(/(\s+)/)
  let braceDepth = 0
  let leadingSpace = ""
  for (let i = 0; i < pieces.length; i += 2) {
    const piece = pieces[i]!
    const space = pieces[i + 1] ?? ""
    if (piece.length === 0) {
      if (chunks.length === 0) leadingSpace += space
      else chunks[chunks.length - 1] = { ...chunks[chunks.length - 1]!, space: chunks[chunks.length - 1]!.space + space }
      continue
    }
    const opens = occurrences(piece, "{{")
    const closes = occurrences(piece, "}}")
    const isProtected = braceDepth > 0 || opens > 0 || closes > 0 || piece.includes("|") || isUrlOrAddress(piece)
    braceDepth = Math.max(0, braceDepth + opens - closes)
    let start = 0
    while (start < piece.length && !startsCore(piece[start]!)) start += 1
    let end = piece.length
    while (end > start && !endsCore(piece[end - 1]!)) end -= 1
    chunks.push({
      prefix: (chunks.length === 0 ? leadingSpace : "") + piece.slice(0, start),
      core: piece.slice(start, end),
      suffix: piece.slice(end),
      space,
      isProtected
    })
  }
  if (chunks.length === 0 && leadingSpace.length > 0) chunks.push({ prefix: leadingSpace, core: "", suffix: "", space: "", isProtected: false })
  return chunks
}

export const join = (chunks: ReadonlyArray<Chunk>): string =>
  chunks.map((chunk) => chunk.prefix + chunk.core + chunk.suffix + chunk.space).join("")

/** The lowercased words of a phrase, as chunks of text would give them. */
export const phraseWords = (phrase: string): Array<string> =>
  chunksOf(phrase).map((chunk) => chunk.core.toLowerCase()).filter((word) => word.length > 0)

export interface PhraseMatch<A> {
  readonly start: number
  /** One past the last chunk of the match. */
  readonly end: number
  readonly entry: A
}

/**
 * Finds phrases in chunks: at each position the longest phrase wins and the
 * scan resumes after it. A phrase never spans a protected chunk, and only the
 * last chunk of a match may carry sentence punctuation after its core.
 */
export const phraseMatcher = <A>(entries: ReadonlyArray<A>, phraseOf: (entry: A) => string) => {
  const byFirstWord = new Map<string, Array<{ readonly words: ReadonlyArray<string>; readonly entry: A }>>()
  for (const entry of entries) {
    const words = phraseWords(phraseOf(entry))
    if (words.length === 0) continue
    const candidates = byFirstWord.get(words[0]!) ?? []
    candidates.push({ words, entry })
    byFirstWord.set(words[0]!, candidates)
  }
  for (const candidates of byFirstWord.values()) candidates.sort((a, b) => b.words.length - a.words.length)

  /** `lowered[i]` is chunk i's lowercased core, `undefined` for a protected chunk. */
  const matchesAt = (
    chunks: ReadonlyArray<Chunk>,
    lowered: ReadonlyArray<string | undefined>,
    start: number,
    words: ReadonlyArray<string>
  ) => {
    if (start + words.length > chunks.length) return false
    for (let k = 0; k < words.length; k++) {
      if (lowered[start + k] !== words[k]) return false
      if (k < words.length - 1 && (chunks[start + k]!.suffix.length > 0 || chunks[start + k + 1]!.prefix.length > 0)) return false
    }
    return true
  }

  return {
    find: (chunks: ReadonlyArray<Chunk>): Array<PhraseMatch<A>> => {
      const lowered = chunks.map((chunk) => (chunk.isProtected ? undefined : chunk.core.toLowerCase()))
      const found: Array<PhraseMatch<A>> = []
      let i = 0
      while (i < chunks.length) {
        const word = lowered[i]
        const candidates = word === undefined ? undefined : byFirstWord.get(word)
        const match = candidates?.find((candidate) => matchesAt(chunks, lowered, i, candidate.words))
        if (match === undefined) {
          i += 1
        } else {
          found.push({ start: i, end: i + match.words.length, entry: match.entry })
          i += match.words.length
        }
      }
      return found
    }
  }
}

/** `replacement` written with the capitalisation of `original` (ALL CAPS, Capitalised or as is). */
export const withCaseOf = (original: string, replacement: string): string => {
  if (replacement.length === 0) return replacement
  const letters = original.replace(/[^\p{L}]/gu, "")
  if (letters.length > 1 && letters === letters.toUpperCase()) return replacement.toUpperCase()
  const first = original.charAt(0)
  return first !== first.toLowerCase() ? replacement.charAt(0).toUpperCase() + replacement.slice(1) : replacement
}

export interface Edit {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** Applies non-overlapping edits to `content` in one pass; everything between them stays byte for byte. */
export const applyEdits = (content: string, edits: ReadonlyArray<Edit>): string => {
  const parts: Array<string> = []
  let position = 0
  for (const edit of [...edits].sort((a, b) => a.start - b.start || a.end - b.end)) {
    if (edit.start < position) continue
    parts.push(content.slice(position, edit.start), edit.text)
    position = edit.end
  }
  parts.push(content.slice(position))
  return parts.join("")
}
