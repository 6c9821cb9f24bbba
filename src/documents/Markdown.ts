import { Effect } from "effect"
import { gfm } from "@joplin/turndown-plugin-gfm"
import * as domino from "@mixmark-io/domino"
import TurndownService from "turndown"
import { Unconvertible, unconvertible } from "./Unconvertible.ts"

/** Markdown output shared by every format: tables, HTML. Runs on the conversion worker. */

const cell = (value: string) => value.replace(/\r?\n/g, " ").replaceAll("|", "\\|").trim()

/** Rows as a Markdown table, the first row as its header; ragged rows are padded. */
export const markdownTable = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  if (rows.length === 0) return ""
  const width = Math.max(1, ...rows.map((row) => row.length))
  const line = (row: ReadonlyArray<string>) =>
    `| ${Array.from({ length: width }, (_, i) => cell(row[i] ?? "")).join(" | ")} |`
  return [line(rows[0]), `| ${Array.from({ length: width }, () => "---").join(" | ")} |`, ...rows.slice(1).map(line)]
    .join("\n")
}

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
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

/** The depth of a document's element tree, walked without recursion. */
const depthOf = (root: domino.DomNode): number => {
  let deepest = 0
  const stack: Array<[domino.DomNode, number]> = [[root, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (depth > deepest) deepest = depth
    for (let child = node.firstChild; child !== null; child = child.nextSibling) {
      if (child.nodeType === 1) stack.push([child, depth + 1])
    }
  }
  return deepest
}

/**
 * HTML as Markdown: parsed like a browser (nothing runs, nothing is loaded),
 * refused past `maxDepth` nested elements, then converted by turndown with
 * GitHub-flavoured tables.
 */
export const htmlToMarkdown = (html: string, maxDepth: number): Effect.Effect<string, Unconvertible> =>
  Effect.gen(function*() {
    const document = yield* Effect.try({ try: () => domino.createDocument(html), catch: unconvertible("HTML") })
    const depth = depthOf(document.documentElement)
    if (depth > maxDepth) {
      return yield* new Unconvertible({ reason: `nests HTML elements ${depth} levels deep; at most ${maxDepth} are accepted` })
    }
    return yield* Effect.try({ try: () => turndown.turndown((document.body ?? document.documentElement) as unknown as TurndownService.Node), catch: unconvertible("HTML") })
  })
