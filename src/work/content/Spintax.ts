import { Data, Result } from "effect"

/**
 * Spintax in the spec's syntax, `{{RANDOM | option one | option two}}`, beside
 * merge fields `{{firstName}}` (optionally with a fallback, `{{firstName | there}}`).
 * Options may hold merge fields and further groups. The parser is one linear
 * pass with an explicit stack (no recursion, no backtracking regex), so hostile
 * input costs time in proportion to its length; nesting is capped at
 * `maxSpintaxDepth`. Single braces are plain text; `{{` and `}}` always are syntax.
 */

export interface TextNode {
  readonly _tag: "Text"
  readonly text: string
}

export interface MergeFieldNode {
  readonly _tag: "MergeField"
  /** The field name as written, trimmed (`firstName`, `Company Name`). */
  readonly name: string
  /** Text used when the recipient has no value for the field; `undefined` when none was written. */
  readonly fallback: string | undefined
  /** The exact source text, `{{ firstName }}`, kept verbatim by `expand`. */
  readonly source: string
  readonly position: number
}

export interface RandomGroupNode {
  readonly _tag: "Random"
  /** The options, whitespace around each trimmed; an option may be empty (it omits the phrase). */
  readonly options: ReadonlyArray<Template>
  readonly position: number
}

export type SpintaxNode = TextNode | MergeFieldNode | RandomGroupNode
export type Template = ReadonlyArray<SpintaxNode>

/** Malformed spintax: where (0-based `position`, 1-based `line` and `column`) and what. */
export class SpintaxSyntaxError extends Data.TaggedError("SpintaxSyntaxError")<{
  readonly message: string
  readonly position: number
  readonly line: number
  readonly column: number
}> {}

/** A source of numbers in [0, 1): `Math.random`, or `seededRandom(seed)` for reproducible choices. */
export type RandomSource = () => number

export const maxSpintaxDepth = 10
const maxMergeFieldLength = 200

const randomHead = /\s*RANDOM\s*\|/iy
const mergeFieldBody = /^\s*([^{}|]*?)\s*(?:\|\s*([^{}|]*?)\s*)?$/

interface OpenGroup {
  readonly position: number
  readonly options: Array<Template>
  current: Array<SpintaxNode>
}

const syntaxError = (source: string, position: number, what: string): SpintaxSyntaxError => {
  const before = source.slice(0, position)
  const line = before.split("\n").length
  const column = position - before.lastIndexOf("\n")
  return new SpintaxSyntaxError({
    message: `${what} at line ${line}, column ${column} (character ${position + 1})`,
    position,
    line,
    column
  })
}

/** Trims the whitespace at an option's two ends (inside its first and last text). */
const trimOption = (nodes: Array<SpintaxNode>): Template => {
  const first = nodes[0]
  if (first?._tag === "Text") nodes[0] = { _tag: "Text", text: first.text.trimStart() }
  const last = nodes[nodes.length - 1]
  if (last?._tag === "Text") nodes[nodes.length - 1] = { _tag: "Text", text: last.text.trimEnd() }
  return nodes.filter((node) => node._tag !== "Text" || node.text.length > 0)
}

/** Parses text holding spintax groups and merge fields; fails naming the position of the first fault. */
export const parse = (source: string): Result.Result<Template, SpintaxSyntaxError> => {
  const root: Array<SpintaxNode> = []
  const open: Array<OpenGroup> = []
  const current = () => (open.length > 0 ? open[open.length - 1]!.current : root)
  let textStart = 0
  const flushText = (end: number) => {
    if (end > textStart) current().push({ _tag: "Text", text: source.slice(textStart, end) })
  }
  let i = 0
  while (i < source.length) {
    const char = source.charCodeAt(i)
    const next = source.charCodeAt(i + 1)
    if (char === 123 && next === 123) { // "{{"
      flushText(i)
      randomHead.lastIndex = i + 2
      if (randomHead.test(source)) {
        if (open.length >= maxSpintaxDepth) {
          return Result.fail(syntaxError(source, i, `Spintax nested deeper than ${maxSpintaxDepth} levels`))
        }
        open.push({ position: i, options: [], current: [] })
        i = randomHead.lastIndex
      } else {
        const close = source.indexOf("}}", i + 2)
        if (close < 0) return Result.fail(syntaxError(source, i, `Unclosed "{{"`))
        const body = source.slice(i + 2, close)
        const match = body.length <= maxMergeFieldLength ? mergeFieldBody.exec(body) : null
        if (match === null || match[1] === undefined || match[1].length === 0) {
          return Result.fail(syntaxError(source, i, `Invalid merge field or unclosed "{{"`))
        }
        if (match[1].toUpperCase() === "RANDOM") {
          return Result.fail(syntaxError(source, i, `"{{RANDOM" needs options separated by "|"`))
        }
        current().push({ _tag: "MergeField", name: match[1], fallback: match[2], source: source.slice(i, close + 2), position: i })
        i = close + 2
      }
      textStart = i
    } else if (char === 125 && next === 125) { // "}}"
      if (open.length === 0) return Result.fail(syntaxError(source, i, `Unexpected "}}" without an opening "{{"`))
      flushText(i)
      const group = open.pop()!
      group.options.push(trimOption(group.current))
      current().push({ _tag: "Random", options: group.options, position: group.position })
      i += 2
      textStart = i
    } else if (char === 124 && open.length > 0) { // "|" between options
      const group = open[open.length - 1]!
      flushText(i)
      group.options.push(trimOption(group.current))
      group.current = []
      i += 1
      textStart = i
    } else {
      i += 1
    }
  }
  const unclosed = open[open.length - 1]
  if (unclosed !== undefined) return Result.fail(syntaxError(source, unclosed.position, `Unclosed "{{RANDOM"`))
  flushText(source.length)
  return Result.succeed(root)
}

/** Writes a template back as text (groups in the canonical `{{RANDOM | a | b}}` form). */
export const format = (template: Template): string => template.map(formatNode).join("")

const formatNode = (node: SpintaxNode): string => {
  switch (node._tag) {
    case "Text":
      return node.text
    case "MergeField":
      return node.source
    case "Random":
      return `{{RANDOM | ${node.options.map(format).join(" | ")}}}`
  }
}

const pick = <A>(items: ReadonlyArray<A>, random: RandomSource): A =>
  items[Math.min(items.length - 1, Math.floor(random() * items.length))]!

/**
 * Walks the template choosing one option per group with `random`, handing each
 * piece of text and each merge field to `emit`. Depth is bounded by the parser.
 */
export const walk = (
  template: Template,
  random: RandomSource,
  emit: (node: TextNode | MergeFieldNode) => void
): void => {
  for (const node of template) {
    if (node._tag === "Random") walk(pick(node.options, random), random, emit)
    else emit(node)
  }
}

/** One variant: every group replaced by one of its options; merge fields stay as written. */
export const expand = (template: Template, random: RandomSource): string => {
  const parts: Array<string> = []
  walk(template, random, (node) => parts.push(node._tag === "Text" ? node.text : node.source))
  return parts.join("")
}

/** How many distinct texts the template can produce (saturates at `Infinity` for absurd templates). */
export const countVariants = (template: Template): number =>
  template.reduce(
    (product, node) =>
      node._tag === "Random"
        ? product * node.options.reduce((sum, option) => sum + countVariants(option), 0)
        : product,
    1
  )

/** Number of spintax groups, nested ones included. */
export const countGroups = (template: Template): number =>
  template.reduce(
    (count, node) =>
      node._tag === "Random" ? count + 1 + node.options.reduce((sum, option) => sum + countGroups(option), 0) : count,
    0
  )

/** The distinct merge field names the template uses, in order of first appearance. */
export const mergeFieldNames = (template: Template): ReadonlyArray<string> => {
  const names = new Set<string>()
  const visit = (nodes: Template): void => {
    for (const node of nodes) {
      if (node._tag === "MergeField") names.add(node.name)
      else if (node._tag === "Random") node.options.forEach(visit)
    }
  }
  visit(template)
  return [...names]
}

/**
 * A reproducible random source: the same seed (say `${campaignId}:${recipientId}`)
 * always yields the same sequence, so a recipient's variant can be rebuilt.
 * FNV-1a hashes the seed; mulberry32 generates.
 */
export const seededRandom = (seed: string): RandomSource => {
  let state = 0x811c9dc5
  for (let i = 0; i < seed.length; i++) {
    state ^= seed.charCodeAt(i)
    state = Math.imul(state, 0x01000193)
  }
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
