import { Effect } from "effect"
import { tokenCounter } from "../../models/llm/Tokenizer.ts"

/**
 * Splits a Markdown document into search chunks: by headings first (a chunk
 * never mixes the ends of two sections when it could avoid it), then into
 * pieces of about `targetTokens` tokens of whole blocks (paragraphs, list
 * items, fenced code), with about `overlapTokens` of the previous chunk's
 * last blocks repeated at the start of the next one in the same section, so
 * an answer spanning a cut is still found. Blocks larger than a chunk are cut
 * at whole words. Tokens are counted with the project's tokenizer, which
 * yields to the event loop as it goes. Chunk `ordinal`s follow the text, so a
 * chunk's id (`<documentId>_<ordinal>`) is stable for a given document.
 */

export const targetTokens = 500
export const overlapTokens = 60

export interface Chunk {
  readonly ordinal: number
  /** The heading path of the section the chunk starts in (`Guide › Setup › Linux`); the title for text before any heading. */
  readonly heading: string
  readonly content: string
  readonly tokens: number
}

interface Block {
  readonly heading: string
  /** The block starts a section (its heading line). */
  readonly opensSection: boolean
  readonly text: string
  readonly tokens: number
}

const headingLine = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/
const fence = /^[ \t]{0,3}(`{3,}|~{3,})/

/** The blocks of `markdown` with their section's heading path; fenced code is never split by a blank line. */
const sectionsAndBlocks = (markdown: string, title: string) => {
  const blocks: Array<{ heading: string; opensSection: boolean; text: string }> = []
  const path: Array<string> = []
  let heading = title
  let current: Array<string> = []
  let opensSection = false
  let openFence: string | undefined
  const flush = () => {
    const text = current.join("\n").trim()
    if (text.length > 0) blocks.push({ heading, opensSection, text })
    current = []
    opensSection = false
  }
  for (const line of markdown.split("\n")) {
    const fenceMark = fence.exec(line)?.[1]
    if (openFence !== undefined) {
      current.push(line)
      if (fenceMark !== undefined && fenceMark[0] === openFence[0] && fenceMark.length >= openFence.length) openFence = undefined
      continue
    }
    if (fenceMark !== undefined) {
      openFence = fenceMark
      current.push(line)
      continue
    }
    const match = headingLine.exec(line)
    if (match !== null) {
      flush()
      const level = match[1]!.length
      path.length = Math.min(path.length, level - 1)
      path[level - 1] = match[2]!.trim()
      heading = path.filter((part) => part !== undefined).join(" › ")
      opensSection = true
      current.push(line)
      continue
    }
    if (line.trim() === "") {
      // A heading line stays with the paragraph under it.
      if (!(opensSection && current.length === 1)) flush()
      continue
    }
    current.push(line)
  }
  flush()
  return blocks
}

export const chunkMarkdown = (markdown: string, title: string) =>
  Effect.gen(function*() {
    const counter = yield* tokenCounter
    const blocks: Array<Block> = []
    for (const block of sectionsAndBlocks(markdown, title)) {
      const tokens = yield* counter.text(block.text)
      if (tokens <= targetTokens) {
        blocks.push({ ...block, tokens })
        continue
      }
      // A block larger than a chunk: cut at whole words into pieces of at most `targetTokens`.
      let rest = block.text
      let first = true
      while (rest.length > 0) {
        let piece = yield* counter.wordsWithin(rest, targetTokens)
        if (piece.length === 0) piece = rest.slice(0, 1_000)
        rest = rest.slice(piece.length)
        blocks.push({ heading: block.heading, opensSection: first && block.opensSection, text: piece.trim(), tokens: yield* counter.text(piece) })
        first = false
      }
    }

    const chunks: Array<Chunk> = []
    let current: Array<Block> = []
    let size = 0
    const emit = () => {
      if (current.length === 0) return
      chunks.push({
        ordinal: chunks.length,
        heading: current[0]!.heading,
        content: current.map((block) => block.text).join("\n\n"),
        tokens: size
      })
    }
    for (const block of blocks) {
      // A new section starts a new chunk once the current one is half full; small sections share one.
      const startsFresh = block.opensSection && size >= targetTokens / 2
      if (current.length > 0 && (startsFresh || size + block.tokens > targetTokens)) {
        emit()
        const overlap: Array<Block> = []
        let overlapSize = 0
        if (!startsFresh) {
          for (let i = current.length - 1; i >= 0; i--) {
            const previous = current[i]!
            if (previous.heading !== block.heading || overlapSize + previous.tokens > overlapTokens) break
            overlap.unshift(previous)
            overlapSize += previous.tokens
          }
        }
        // The overlap never makes a chunk overflow.
        current = overlapSize + block.tokens <= targetTokens ? overlap : []
        size = current === overlap ? overlapSize : 0
      }
      current.push(block)
      size += block.tokens
    }
    emit()
    return { chunks, tokens: blocks.reduce((total, block) => total + block.tokens, 0) }
  })
