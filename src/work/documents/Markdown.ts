import { Effect } from "effect"
import type * as domino from "@mixmark-io/domino"
import { Parser } from "htmlparser2"
import type TurndownService from "turndown"
import { Unconvertible, unconvertible } from "./Unconvertible.ts"

/** Markdown output shared by every format: tables, HTML. Runs on the conversion worker. */

const cell = (value: string) => value.replace(/\r?\n/g, " ").replaceAll("|", "\\|").trim()

/**
 * Rows as a Markdown table, the first row as its header, padded to the
 * widest row. Other rows keep their own cells, trailing empty ones dropped:
 * GitHub-flavoured Markdown fills short rows, and padding every row to the
 * widest would let a small file with one wide row and many short ones
 * convert to rows × width cells (44 KB of CSV to 120 MB).
 */
export const markdownTable = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  if (rows.length === 0) return ""
  let width = 1
  for (const row of rows) width = Math.max(width, row.length)
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map(cell).join(" | ")} |`
  const withoutTrailingEmpty = (row: ReadonlyArray<string>) => {
    let end = row.length
    while (end > 1 && cell(row[end - 1] ?? "") === "") end--
    return row.slice(0, Math.max(end, 1))
  }
  const header = Array.from({ length: width }, (_, i) => rows[0][i] ?? "")
  return [line(header), line(header.map(() => "---")), ...rows.slice(1).map((row) => line(withoutTrailingEmpty(row)))]
    .join("\n")
}

/** The HTML parser and the converter, loaded on first use (see `Converters`). */
let tools: Promise<{ readonly parse: typeof domino.createDocument; readonly turndown: TurndownService }> | undefined

const loadTools = () =>
  Effect.promise(() =>
    tools ??= Promise.all([import("@mixmark-io/domino"), import("turndown"), import("@joplin/turndown-plugin-gfm")])
      .then(([dom, { default: Turndown }, { gfm }]) => {
        const turndown = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
        turndown.use(gfm)
        turndown.remove(["script", "style", "noscript", "template", "iframe", "object", "embed", "head"])
        // Images become their alt text: their addresses are never fetched, and inline data would bloat the text.
        turndown.addRule("imageAltText", {
          filter: "img",
          replacement: (_content, node) => {
            const alt = (node as unknown as domino.DomNode).getAttribute("alt")?.trim() ?? ""
            return alt === "" ? "" : `[${alt}]`
          }
        })
        return { parse: dom.createDocument, turndown }
      })
  )

/** Whether turndown's escaping would change the text: one pass instead of its thirteen. */
const needsEscape = /[\\*`[\]_]|^[-+=#~>]|^\d+\. /

/** turndown's escaping of text that would otherwise read as Markdown. */
export const markdownEscaper = Effect.map(loadTools(), ({ turndown }) => (text: string) =>
  needsEscape.test(text) ? turndown.escape(text) : text)

/**
 * Whether elements nest deeper than `maxDepth`, read by htmlparser2's
 * streaming tokenizer (no tree), which stops at the limit. Checked before
 * domino builds its tree: browsers' tree building slows quadratically with
 * nesting (100,000 nested `<div>`s would take hours, not milliseconds).
 */
const nestsDeeperThan = (html: string, maxDepth: number): boolean => {
  let depth = 0
  let tooDeep = false
  const parser: Parser = new Parser({
    onopentag() {
      depth++
      if (depth > maxDepth) {
        tooDeep = true
        parser.pause()
      }
    },
    onclosetag() {
      depth--
    }
  })
  parser.write(html)
  if (!tooDeep) parser.end()
  return tooDeep
}

/**
 * A table whose first row has no header cells gets that row as its header
 * (Word tables have none), so the Markdown table keeps its column names.
 */
const promoteHeaderRows = (document: domino.DomDocument) => {
  for (const table of Array.from(document.querySelectorAll("table"))) {
    const firstRow = table.querySelector("tr")
    if (firstRow === undefined || firstRow.querySelector("th") !== undefined) continue
    for (const cell of Array.from(firstRow.children)) {
      if (cell.tagName !== "TD") continue
      const header = document.createElement("th")
      while (cell.firstChild !== null) header.appendChild(cell.firstChild)
      firstRow.replaceChild(header, cell)
    }
  }
}

/**
 * Preformatted blocks as one `<code>` holding their text (line breaks kept),
 * the shape turndown fences: Word's code paragraphs and highlighted HTML come
 * as `<pre>` of several runs and breaks.
 */
const codeInPreformatted = (document: domino.DomDocument) => {
  for (const pre of Array.from(document.querySelectorAll("pre"))) {
    const only = pre.children.length === 1 ? pre.children[0] : undefined
    if (only?.tagName === "CODE" && pre.childNodes.length === 1) continue
    for (const lineBreak of Array.from(pre.querySelectorAll("br"))) {
      lineBreak.parentNode?.replaceChild(document.createTextNode("\n"), lineBreak)
    }
    const code = document.createElement("code")
    code.textContent = pre.textContent
    while (pre.firstChild !== null) pre.removeChild(pre.firstChild)
    pre.appendChild(code)
  }
}

/**
 * HTML as Markdown: refused past `maxDepth` nested elements before any tree
 * is built, else parsed like a browser (nothing runs, nothing is loaded) and
 * converted by turndown with GitHub-flavoured tables.
 */
export const htmlToMarkdown = (html: string, maxDepth: number): Effect.Effect<string, Unconvertible> =>
  Effect.gen(function*() {
    if (nestsDeeperThan(html, maxDepth)) {
      return yield* new Unconvertible({ reason: `nests HTML elements more than ${maxDepth} levels deep` })
    }
    const { parse, turndown } = yield* loadTools()
    const document = yield* Effect.try({ try: () => parse(html), catch: unconvertible("HTML") })
    return yield* Effect.try({ try: () => {
      promoteHeaderRows(document)
      codeInPreformatted(document)
      return turndown.turndown((document.body ?? document.documentElement) as unknown as TurndownService.Node)
    }, catch: unconvertible("HTML") })
  })
