import { markdownTable } from "./Markdown.ts"

/**
 * A PDF's text runs laid out again as Markdown, from their positions and
 * sizes alone (PDFs hold no structure worth trusting): lines from runs on
 * one baseline, running headers, footers and page numbers dropped,
 * headings from larger type, bullets as list items, dot-leader contents
 * entries as a list, aligned columns as tables, and the lines of a
 * paragraph joined (hyphenated words made whole again).
 */

/** One run of text as pdf.js reports it: its baseline origin, advance width and type size, in points. */
export interface TextRun {
  readonly text: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly size: number
  /** Set in a monospace font: code. */
  readonly monospace: boolean
}

/** A page's width (points) and its text runs. */
export interface PdfPage {
  readonly width: number
  readonly runs: ReadonlyArray<TextRun>
}

interface Line {
  readonly page: number
  readonly y: number
  readonly x: number
  readonly right: number
  readonly size: number
  /** Runs separated by wide gaps: the cells of a table row, or a header's parts. */
  readonly cells: ReadonlyArray<{ readonly x: number; readonly text: string }>
  readonly text: string
  /** Every run of the line is monospace: a line of a code block. */
  readonly code: boolean
}

/** Ligatures (ﬁ, ﬂ, ﬀ…) as their letters; private-use bullets of symbol fonts as bullets. */
const normalizedText = (text: string) =>
  text.replace(/[\uFB00-\uFB06]/g, (ligature) => ligature.normalize("NFKC")).replace(/[\uF0B7\uF0A7\uF076\uF0D8\uF0FC\uF06E\uF0A8]/g, "•")

/** The largest (or smallest) of many values: spreading them into `Math.max` overflows the stack past ~100,000. */
const largest = (values: Iterable<number>) => {
  let result = -Infinity
  for (const value of values) if (value > result) result = value
  return result
}
const smallest = (values: Iterable<number>) => -largest(Array.from(values, (value) => -value))

/** A gap this many type sizes wide separates cells, not words. */
const cellGap = 2

/** Runs on one baseline (within a third of the type size), left to right. */
const linesOf = (page: number, runs: ReadonlyArray<TextRun>): Array<Line> => {
  const sorted = runs.filter((run) => run.text !== "" && run.size > 0).sort((a, b) => b.y - a.y || a.x - b.x)
  const groups: Array<Array<TextRun>> = []
  for (const run of sorted) {
    const last = groups.at(-1)
    if (last !== undefined && Math.abs(last[0].y - run.y) <= Math.max(last[0].size, run.size) / 3) last.push(run)
    else groups.push([run])
  }
  return groups.map((group) => lineOf(page, group.sort((a, b) => a.x - b.x))).filter((line) => line.text !== "")
}

/** A glyph printed over another (TeX draws © as a "c" inside a circle): only the wider one is text. */
const overprinted = (runs: ReadonlyArray<TextRun>, index: number) => {
  const run = runs[index]
  const covers = (other: TextRun | undefined) =>
    other !== undefined && other.text.trim() !== "" && other.x <= run.x && run.x + run.width <= other.x + other.width + 0.5
  // Runs are in order of x: a glyph that covers this one is next to it.
  return run.text.trim().length === 1 && (covers(runs[index - 1]) || covers(runs[index + 1]))
}

/**
 * A run in a monospace font that holds more than dots and bullets: pdf.js
 * also calls dot leaders and symbol-font bullets monospace.
 */
const isCode = (run: TextRun) => run.monospace && !/^[\s.•·\u2026\uF000-\uF0FF]*$/.test(run.text)

const lineOf = (page: number, runs: ReadonlyArray<TextRun>): Line => {
  const size = largest(runs.map((run) => run.size))
  const code = runs.some(isCode) && runs.every((run) => isCode(run) || run.text.trim() === "")
  const cells: Array<{ x: number; text: string }> = []
  let right = -Infinity
  let pendingSpace = false
  let previousCode = false
  for (const [index, run] of runs.entries()) {
    if (run.text.trim() === "") {
      if (run.width > cellGap * size) right = -Infinity
      pendingSpace = true
      continue
    }
    if (overprinted(runs, index)) continue
    const cell = cells.at(-1)
    const gap = run.x - right
    const inlineCode = isCode(run) && !code
    const space = pendingSpace || gap > 0.15 * run.size
    if (cell === undefined || right === -Infinity || gap > cellGap * size) {
      cells.push({ x: run.x, text: inlineCode ? `\`${run.text.trim()}\`` : run.text })
    } else if (inlineCode && previousCode) {
      // Code runs next to each other make one code span.
      cell.text = `${cell.text.slice(0, -1)}${space ? " " : ""}${run.text.trim()}\``
    } else {
      const text = inlineCode ? `\`${run.text.trim()}\`` : run.text
      cell.text += space && !/\s$/.test(cell.text) && !/^\s/.test(text) ? ` ${text}` : text
    }
    right = run.x + run.width
    pendingSpace = false
    previousCode = inlineCode
  }
  const trimmed = cells.map((cell) => ({ x: cell.x, text: normalizedText(cell.text).replace(/\s+/g, " ").trim() }))
    .filter((cell) => cell.text !== "")
  return {
    page,
    y: runs[0].y,
    x: trimmed[0]?.x ?? 0,
    right: largest(runs.map((run) => run.x + run.width)),
    size,
    cells: trimmed,
    text: trimmed.map((cell) => cell.text).join(" "),
    code
  }
}

const pageNumber = /^(page\s+)?(\d{1,4}|[ivxlcdm]{1,7})(\s*(of|\/)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$/i

/** What a running header or footer has in common from page to page: its words, numbers aside. */
const runningKey = (line: Line) => line.text.toLowerCase().replace(/\d+/g, "#").replace(/\s+/g, " ")

/**
 * Lines at a page's top or bottom edge, set apart from its body by a wide
 * gap, that repeat on other pages (numbers aside) or hold a page number.
 */
const withoutRunningLines = (pages: ReadonlyArray<ReadonlyArray<Line>>): Array<Array<Line>> => {
  const edges = pages.map((lines) => {
    if (lines.length < 2) return []
    const [first, second] = lines
    const [beforeLast, last] = lines.slice(-2)
    return [
      ...(first.y - second.y > 2 * first.size ? [first] : []),
      ...(beforeLast.y - last.y > 2 * last.size ? [last] : [])
    ]
  })
  const pagesWith = new Map<string, number>()
  for (const lines of edges) for (const key of new Set(lines.map(runningKey))) pagesWith.set(key, (pagesWith.get(key) ?? 0) + 1)
  const repeated = (line: Line) => {
    const count = pagesWith.get(runningKey(line)) ?? 0
    return count >= 2 && count >= 0.4 * pages.length
  }
  const running = new Set(
    edges.flat().filter((line) => repeated(line) || (line.cells.length <= 3 && line.cells.some((cell) => pageNumber.test(cell.text))))
  )
  return pages.map((lines) => lines.filter((line) => !running.has(line)))
}

/** The most common value, each weighed by `weight`. */
const mode = (values: ReadonlyArray<readonly [value: number, weight: number]>) => {
  const weights = new Map<number, number>()
  for (const [value, weight] of values) weights.set(value, (weights.get(value) ?? 0) + weight)
  return [...weights].sort((a, b) => b[1] - a[1])[0]?.[0]
}

const rounded = (value: number) => Math.round(value * 2) / 2

const contentsEntry = /^(.+?)\s*(?:\.\s*){4,}\s*(\d{1,4}|[ivxlcdm]{1,7})$/i
const bullet = /^[•◦▪▫‣●○■□∙·–*]\s*/
const numbered = /^(\d{1,3}|[a-z])[.)]\s+/

type Heading = { readonly kind: "heading"; readonly level: number; text: string }

type Block =
  | Heading
  | { readonly kind: "line"; readonly text: string }
  | { readonly kind: "paragraph"; text: string; last: Line }
  | { readonly kind: "item"; readonly marker: string; readonly indent: number; text: string; last: Line }
  | { readonly kind: "table"; readonly rows: Array<Line> }
  | { readonly kind: "code"; readonly lines: Array<Line> }

const isHeadingOf = (block: Block | undefined, level: number) => block?.kind === "heading" && block.level === level

/** The lines of a paragraph as one: a word hyphenated at a line's end is made whole again. */
const joined = (text: string, next: string) => {
  if (/\u00AD$/.test(text)) return text.slice(0, -1) + next
  if (/\p{L}-$/u.test(text) && /^\p{Ll}/u.test(next)) return text.slice(0, -1) + next
  return `${text} ${next}`
}

/** Paragraph text that would read as Markdown structure starts with an escape. */
const escapedStart = (text: string) => text.replace(/^([#>]|[-+*] |\d+\. )/, "\\$1")

const tableOf = (rows: ReadonlyArray<Line>) => {
  const columns = rows.reduce((widest, row) => (row.cells.length > widest.cells.length ? row : widest)).cells.map((cell) => cell.x)
  return markdownTable(rows.map((row) => {
    const cells = columns.map(() => "")
    for (const cell of row.cells) {
      let column = 0
      while (column + 1 < columns.length && columns[column + 1] <= cell.x + 2) column++
      cells[column] = cells[column] === "" ? cell.text : `${cells[column]} ${cell.text}`
    }
    return cells
  }))
}

/**
 * Code lines as a fenced block: indentation from their offsets (in the
 * font's character widths, about 0.6 of its size), blank lines from gaps.
 */
const codeBlockOf = (lines: ReadonlyArray<Line>, lineSpacing: number) => {
  const left = smallest(lines.map((line) => line.x))
  const text = lines.map((line, index) => {
    const blank = index > 0 && lines[index - 1].y - line.y > lineSpacing * 1.5 ? "\n" : ""
    const indent = " ".repeat(Math.min(Math.round((line.x - left) / (0.6 * line.size)), 40))
    return `${blank}${indent}${line.cells.map((cell) => cell.text).join("  ")}`
  }).join("\n")
  const fence = "`".repeat(Math.max(3, largest(Array.from(text.matchAll(/`+/g), (match) => match[0].length + 1))))
  return `${fence}\n${text}\n${fence}`
}

/** Markdown from the lines of every page, in reading order. */
export const layoutToMarkdown = (pdfPages: ReadonlyArray<PdfPage>): string => {
  const pages = withoutRunningLines(pdfPages.map(({ runs }, page) => linesOf(page, runs)))
  const lines = pages.flat()
  const bodySize = mode(lines.map((line) => [rounded(line.size), line.text.length])) ?? 10
  const spacings = pages.flatMap((page) =>
    page.slice(1).map((line, index) => [rounded(page[index].y - line.y), 1] as const)
      .filter(([gap]) => gap > 0.9 * bodySize && gap < 2 * bodySize)
  )
  const lineSpacing = mode(spacings) ?? bodySize * 1.2
  // Where lines end when they are full: margins are most often the same on both sides of a page.
  const leftEdge = smallest(lines.map((line) => line.x))
  const rightEdge = (page: number) => (pdfPages[page]?.width ?? 612) - leftEdge
  const endsShort = (line: Line) => line.right < rightEdge(line.page) - 0.35 * (rightEdge(line.page) - leftEdge)
  const isHeading = (line: Line) => line.size >= bodySize * 1.15 && line.text.length < 200
  const headingSizes = [...new Set(lines.filter(isHeading).map((line) => rounded(line.size)))].sort((a, b) => b - a)
  const contentsIndents = [...new Set(lines.filter((line) => contentsEntry.test(line.text)).map((line) => Math.round(line.x)))]
    .sort((a, b) => a - b)
  const bulletIndents = [...new Set(lines.filter((line) => bullet.test(line.text)).map((line) => Math.round(line.x)))].sort((a, b) => a - b)

  const blocks: Array<Block> = []
  let previous: Line | undefined
  for (const line of lines) {
    const last = blocks.at(-1)
    const gap = previous === undefined ? Infinity : previous.page === line.page ? previous.y - line.y : 0
    const follows = previous !== undefined && gap <= lineSpacing * 1.12 && line.size <= bodySize * 1.05
    const contents = contentsEntry.exec(line.text)
    if (line.code && !isHeading(line)) {
      // A code block goes on over a page break (gap 0) and blank lines.
      if (last?.kind === "code" && previous !== undefined && gap <= lineSpacing * 3) last.lines.push(line)
      else blocks.push({ kind: "code", lines: [line] })
    } else if (contents !== null) {
      const indent = contentsIndents.filter((x) => x < Math.round(line.x) - 2).length
      blocks.push({ kind: "item", marker: "-", indent, text: contents[1], last: line })
    } else if (isHeading(line)) {
      const level = Math.min(headingSizes.indexOf(rounded(line.size)) + 1, 6)
      if (last?.kind === "heading" && last.level === level && previous !== undefined && gap <= line.size * 1.5 && /^\p{Ll}/u.test(line.text)) {
        last.text += ` ${line.text}`
      } else {
        blocks.push({ kind: "heading", level, text: line.text })
      }
    } else if (bullet.test(line.text) || numbered.test(line.text)) {
      const ordered = numbered.exec(line.text)
      const indent = bulletIndents.filter((x) => x < Math.round(line.x) - 2).length
      blocks.push({
        kind: "item",
        marker: ordered === null ? "-" : `${ordered[1]}.`,
        indent,
        text: line.text.replace(ordered === null ? bullet : numbered, ""),
        last: line
      })
    } else if (line.cells.length >= 2) {
      if (last?.kind === "table" && follows) last.rows.push(line)
      else blocks.push({ kind: "table", rows: [line] })
    } else if (
      (last?.kind === "paragraph" || last?.kind === "item") &&
      (gap === 0 ? !/[.!?:]$/.test(last.text) : follows) &&
      !(last.kind === "item" && line.x <= last.last.x - 2 && gap !== 0) &&
      !(line.x > last.last.x + 0.8 * bodySize && last.kind === "paragraph") &&
      !endsShort(last.last)
    ) {
      last.text = joined(last.text, line.text)
      last.last = line
    } else {
      blocks.push({ kind: "paragraph", text: line.text, last: line })
    }
    previous = line
  }

  // Three or more headings of one size in a row, with nothing under them, are large type (a title page's
  // authors, say), not sections.
  for (let start = 0; start < blocks.length; start++) {
    const first = blocks[start]
    if (first.kind !== "heading") continue
    let end = start + 1
    while (isHeadingOf(blocks[end], first.level)) end++
    if (end - start >= 3) {
      for (let index = start; index < end; index++) blocks[index] = { kind: "line", text: (blocks[index] as Heading).text }
    }
    start = end - 1
  }

  return blocks
    .map((block) => {
      switch (block.kind) {
        case "heading":
          return `${"#".repeat(block.level)} ${block.text}`
        case "paragraph":
        case "line":
          return escapedStart(block.text)
        case "item":
          return `${"  ".repeat(block.indent)}${block.marker} ${block.text}`
        case "code":
          return codeBlockOf(block.lines, lineSpacing)
        case "table":
          // One row of cells is no table: its cells read as one line.
          return block.rows.length < 2 ? escapedStart(block.rows[0].text) : tableOf(block.rows)
      }
    })
    .reduce((text, block, index, all) => {
      if (index === 0) return block
      const items = /^\s*(-|\d+\.|[a-z]\.) /
      return `${text}${items.test(block) && items.test(all[index - 1]) ? "\n" : "\n\n"}${block}`
    }, "")
}
