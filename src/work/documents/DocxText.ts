import { Parser } from "htmlparser2"
import { type DocxStyles, isMonospaceFont, paragraphKind } from "./DocxStyles.ts"

/**
 * The fast path for Word documents of plain text: `word/document.xml` read
 * by htmlparser2's streaming tokenizer (no tree) straight to Markdown,
 * several times faster than mammoth's HTML and turndown (which build and
 * walk two trees), in memory that grows with the Markdown only.
 * It writes what mammoth and turndown write for the same document —
 * headings, lists, bold, italic, code, links and line breaks — and gives up
 * (`undefined`) at the first element it does not know (tables, images,
 * fields, footnotes, tracked changes, content controls…), which mammoth
 * then converts.
 */

interface Segment {
  readonly text: string
  readonly bold: boolean
  readonly italic: boolean
  readonly code: boolean
  readonly href: string | undefined
  /** A bookmark: mammoth writes an empty anchor there, which splits turndown's text. */
  readonly anchor?: true
  /** A line break. */
  readonly lineBreak?: true
}

/**
 * The elements of `word/document.xml` this path knows: any other one sends
 * the document to mammoth. Inside paragraph and run properties only the
 * style, numbering, bold, italic, strikethrough and font are read.
 */
const known = new Set([
  "w:document",
  "w:body",
  "w:p",
  "w:pPr",
  "w:r",
  "w:rPr",
  "w:t",
  "w:tab",
  "w:br",
  "w:hyperlink",
  "w:bookmarkStart",
  "w:bookmarkEnd",
  "w:proofErr",
  "w:lastRenderedPageBreak",
  "w:permStart",
  "w:permEnd",
  "w:sectPr"
])
const falseValues = new Set(["false", "0"])

const whitespaceRun = /[ \t\r\n]+/g

const isPlain = (segment: Segment) =>
  !segment.bold && !segment.italic && !segment.code && segment.href === undefined && segment.anchor !== true && segment.lineBreak !== true

const sameMarks = (a: Segment, b: Segment) =>
  a.bold === b.bold && a.italic === b.italic && a.code === b.code && a.href === b.href && a.anchor !== true && b.anchor !== true &&
  a.lineBreak !== true && b.lineBreak !== true

/** The paragraph's inline Markdown the way turndown writes mammoth's HTML of it. */
const inlineMarkdown = (segments: ReadonlyArray<Segment>, escape: (text: string) => string): string => {
  // Most paragraphs are one plain text: collapsed, trimmed and escaped at once.
  if (segments.length === 1 && isPlain(segments[0])) return escape(segments[0].text.replace(whitespaceRun, " ").trim())
  // turndown's whitespace collapsing: runs of blank space become one space, none after a space or a line's start.
  const lines: Array<Array<Segment>> = [[]]
  for (const segment of segments) {
    if (segment.lineBreak === true) lines.push([])
    else lines.at(-1)!.push(segment)
  }
  return lines.map((line) => {
    const collapsed: Array<Segment> = []
    let afterSpace = true
    for (const segment of line) {
      let text = segment.text.replace(whitespaceRun, " ")
      if (afterSpace) text = text.replace(/^ /, "")
      if (text !== "") afterSpace = text.endsWith(" ")
      collapsed.push({ ...segment, text })
    }
    const lastText = collapsed.findLastIndex((segment) => segment.text !== "")
    if (lastText >= 0) collapsed[lastText] = { ...collapsed[lastText], text: collapsed[lastText].text.replace(/ $/, "") }
    return render(collapsed.filter((segment) => segment.text !== "" || segment.anchor === true), 0, escape)
  }).join("  \n")
}

/** Nesting as mammoth writes it, outermost first: the link, then code, bold, italic. */
const levels = [
  (segment: Segment) => segment.href,
  (segment: Segment) => segment.code,
  (segment: Segment) => segment.bold,
  (segment: Segment) => segment.italic
] as const

/** Moves blank space at either end outside the delimiters, as turndown does. */
const wrapped = (content: string, wrap: (core: string) => string, emptyWhenBlank: boolean) => {
  const core = content.trim()
  const leading = /^\s*/.exec(content)![0]
  const trailing = core === "" ? "" : /\s*$/.exec(content)![0]
  if (core === "" && emptyWhenBlank) return leading
  return `${leading}${wrap(core)}${trailing}`
}

const codeSpan = (content: string) => {
  if (content === "") return ""
  const text = content.replace(/\r?\n|\r/g, " ")
  const extraSpace = /^`|^ .*?[^ ].* $|`$/.test(text) ? " " : ""
  const runs: ReadonlyArray<string> = text.match(/`+/gm) ?? []
  let delimiter = "`"
  while (runs.includes(delimiter)) delimiter += "`"
  return `${delimiter}${extraSpace}${text}${extraSpace}${delimiter}`
}

const linkDestination = (href: string) => {
  const escaped = href.replace(/([<>()])/g, "\\$1")
  return escaped.includes(" ") ? `<${escaped}>` : escaped
}

const render = (segments: ReadonlyArray<Segment>, level: number, escape: (text: string) => string, inCode = false): string => {
  if (level === levels.length) {
    const text = segments.map((segment) => segment.text).join("")
    return inCode ? text : escape(text)
  }
  const key = levels[level]
  let output = ""
  for (let start = 0; start < segments.length;) {
    let end = start + 1
    while (end < segments.length && key(segments[end]) === key(segments[start]) && segments[end].anchor !== true && segments[start].anchor !== true) end++
    const group = segments.slice(start, end)
    const value = key(group[0])
    const code = inCode || (level === 1 && value === true)
    const content = group[0].anchor === true ? "" : render(group, level + 1, escape, code)
    if (value === undefined || value === false || group[0].anchor === true) output += content
    else if (level === 0) output += wrapped(content, (core) => `[${core}](${linkDestination(value as string)})`, false)
    else if (level === 1) output += wrapped(content, codeSpan, false)
    else if (level === 2) output += wrapped(content, (core) => `**${core}**`, true)
    else output += wrapped(content, (core) => `_${core}_`, true)
    start = end
  }
  return output
}

interface Paragraph {
  styleId: string | undefined
  numId: string | undefined
  level: string | undefined
  segments: Array<Segment>
}

interface RunState {
  bold: boolean
  italic: boolean
  styleId: string | undefined
  font: string | undefined
  strike: boolean
}

/**
 * Markdown of `word/document.xml` when it holds only what this path knows,
 * else `undefined`. `links` are the document's relationship targets by id.
 */
export const simpleDocxToMarkdown = (
  xml: string,
  styles: DocxStyles,
  links: ReadonlyMap<string, string>,
  escape: (text: string) => string
): string | undefined => {
  const blocks: Array<string> = []
  const listStack: Array<{ ordered: boolean; count: number }> = []
  let listBlock: Array<string> = []
  let codeBlock: { styleId: string; lines: Array<string> } | undefined
  let complex = false
  let paragraph: Paragraph | undefined
  let run: RunState | undefined
  let href: string | undefined
  let inText = false
  let inRunProperties = false
  let inParagraphProperties = false
  let skipDepth = 0
  let documentClosed = false

  const flushList = () => {
    if (listBlock.length > 0) blocks.push(listBlock.join("\n"))
    listBlock = []
    listStack.length = 0
  }
  const flushCode = () => {
    if (codeBlock === undefined) return
    const code = codeBlock.lines.join("\n")
    let fenceSize = 3
    for (const match of code.matchAll(/^`{3,}/gm)) fenceSize = Math.max(fenceSize, match[0].length + 1)
    const fence = "`".repeat(fenceSize)
    blocks.push(`${fence}\n${code.replace(/\n$/, "")}\n${fence}`)
    codeBlock = undefined
  }
  const giveUp = () => {
    complex = true
    parser.pause()
  }

  const endParagraph = (current: Paragraph) => {
    const kind = paragraphKind(styles, current.styleId, current.numId, current.level)
    if (kind.type !== "code") flushCode()
    if (kind.type !== "item") flushList()
    if (kind.type === "code") {
      const text = current.segments.map((segment) => (segment.lineBreak === true ? "\n" : segment.text)).join("")
      if (text === "") return
      if (codeBlock !== undefined && codeBlock.styleId !== current.styleId) flushCode()
      codeBlock ??= { styleId: current.styleId!, lines: [] }
      codeBlock.lines.push(text)
      return
    }
    // turndown writes a line break inside emphasis, a link, a heading or a list item in ways not followed here.
    const breaks = current.segments.filter((segment) => segment.lineBreak === true)
    if (breaks.length > 0 && (kind.type !== "paragraph" || breaks.some((segment) => segment.bold || segment.italic || segment.code || segment.href !== undefined))) {
      return giveUp()
    }
    const content = inlineMarkdown(current.segments, escape)
    if (kind.type === "heading") {
      if (content !== "") blocks.push(`${"#".repeat(kind.level)} ${content}`)
    } else if (kind.type === "item") {
      if (content === "") return giveUp()
      const depth = kind.level + 1
      if (listStack.length > 0 && depth === 1 && listStack[0].ordered !== kind.ordered) flushList()
      if (depth > listStack.length + 1) return giveUp()
      listStack.length = Math.min(listStack.length, depth)
      if (listStack.length === depth && listStack[depth - 1].ordered !== kind.ordered) return giveUp()
      if (listStack.length < depth) listStack.push({ ordered: kind.ordered, count: 0 })
      const list = listStack[depth - 1]
      list.count++
      const marker = list.ordered ? `${list.count}.  ` : "-   "
      listBlock.push(`${"    ".repeat(depth - 1)}${marker}${content}`)
    } else if (content !== "") {
      blocks.push(content)
    }
  }

  const parser: Parser = new Parser({
    onopentag(name, attributes) {
      if (complex) return
      if (skipDepth > 0) return void skipDepth++
      if (inParagraphProperties) {
        if (name === "w:pStyle") paragraph!.styleId = attributes["w:val"]
        else if (name === "w:numId") paragraph!.numId = attributes["w:val"]
        else if (name === "w:ilvl") paragraph!.level = attributes["w:val"]
        return
      }
      if (inRunProperties) {
        const on = !falseValues.has(attributes["w:val"] ?? "true")
        if (name === "w:b") run!.bold = on
        else if (name === "w:i") run!.italic = on
        else if (name === "w:strike" || name === "w:dstrike") run!.strike = on
        else if (name === "w:rStyle") run!.styleId = attributes["w:val"]
        else if (name === "w:rFonts") run!.font = attributes["w:ascii"]
        return
      }
      if (!known.has(name)) return giveUp()
      switch (name) {
        case "w:p":
          if (paragraph !== undefined) return giveUp()
          paragraph = { styleId: undefined, numId: undefined, level: undefined, segments: [] }
          return
        case "w:pPr":
          if (paragraph === undefined) return giveUp()
          inParagraphProperties = true
          return
        case "w:r":
          if (paragraph === undefined || run !== undefined) return giveUp()
          run = { bold: false, italic: false, styleId: undefined, font: undefined, strike: false }
          return
        case "w:rPr":
          if (run === undefined) return void skipDepth++
          inRunProperties = true
          return
        case "w:t":
          inText = run !== undefined
          return
        case "w:tab":
        case "w:br": {
          if (run === undefined) return giveUp()
          const type = attributes["w:type"]
          if (name === "w:tab") return void pushText("\t")
          if (type === undefined || type === "textWrapping") {
            paragraph!.segments.push({ text: "", bold: run.bold, italic: run.italic, code: isCode(run), href, lineBreak: true })
          }
          return
        }
        case "w:hyperlink": {
          if (paragraph === undefined || href !== undefined) return giveUp()
          const target = attributes["r:id"] === undefined ? "" : links.get(attributes["r:id"])
          const anchor = attributes["w:anchor"]
          if (target === undefined || (target === "" && anchor === undefined)) return giveUp()
          href = anchor === undefined ? target : `${target}#${anchor}`
          return
        }
        case "w:bookmarkStart":
          if (paragraph !== undefined && attributes["w:name"] !== "_GoBack") {
            paragraph.segments.push({ text: "", bold: false, italic: false, code: false, href, anchor: true })
          }
          return
        case "w:sectPr":
          return void skipDepth++
      }
    },
    onclosetag(name) {
      if (complex) return
      if (name === "w:document") documentClosed = true
      if (skipDepth > 0) return void skipDepth--
      if (name === "w:pPr") inParagraphProperties = false
      else if (name === "w:rPr") {
        inRunProperties = false
        if (run?.strike === true) giveUp()
      } else if (name === "w:t") inText = false
      else if (name === "w:r") run = undefined
      else if (name === "w:hyperlink") href = undefined
      else if (name === "w:p" && paragraph !== undefined) {
        const current = paragraph
        paragraph = undefined
        endParagraph(current)
      }
    },
    ontext(text) {
      if (!complex && inText && skipDepth === 0) pushText(text)
    }
  }, { xmlMode: true })

  const isCode = (state: RunState) => {
    const name = state.styleId === undefined ? undefined : styles.names.get(state.styleId)
    return name === undefined ? isMonospaceFont(state.font) : styles.codeRunNames.has(name)
  }
  const pushText = (text: string) => {
    if (run === undefined || paragraph === undefined) return
    const name = run.styleId === undefined ? undefined : styles.names.get(run.styleId)
    const segment = { text, bold: run.bold || name === "Strong", italic: run.italic, code: isCode(run), href }
    // Runs of the same formatting make one text, as mammoth merges them.
    const last = paragraph.segments.at(-1)
    if (last !== undefined && sameMarks(last, segment)) paragraph.segments[paragraph.segments.length - 1] = { ...last, text: last.text + text }
    else paragraph.segments.push(segment)
  }

  parser.write(xml)
  // A document cut short (its root never closed) is malformed XML, which mammoth refuses.
  if (!complex && !documentClosed) return undefined
  if (!complex) parser.end()
  if (complex) return undefined
  flushCode()
  flushList()
  return blocks.join("\n\n")
}
