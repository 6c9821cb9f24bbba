import { Effect } from "effect"
import { docxStyleMap, isMonospaceFont, readDocxStyles } from "./DocxStyles.ts"
import { simpleDocxToMarkdown } from "./DocxText.ts"
import { htmlToMarkdown, markdownEscaper } from "./Markdown.ts"
import { checkedZip, loadParser } from "./Parsers.ts"
import { unconvertible } from "./Unconvertible.ts"
import { descendants, parseXml } from "./Xml.ts"

/**
 * Word documents as Markdown: plain text documents by the streaming path
 * (`DocxText`), anything else by mammoth's HTML through the shared HTML
 * converter; both read styles the same way (`DocxStyles`).
 */

/** The parts of mammoth's document model read here (its elements, runs with their font and style). */
interface MammothElement {
  readonly type: string
  readonly children?: ReadonlyArray<MammothElement>
  readonly font?: string | null
  styleName?: string | null
}

/** Marks monospace runs without a style of their own as `Monospace`, which the style map makes code. */
const markMonospaceRuns = (document: MammothElement) => {
  const stack = [document]
  while (stack.length > 0) {
    const element = stack.pop()!
    if (element.type === "run" && element.styleName == null && isMonospaceFont(element.font ?? undefined)) {
      element.styleName = "Monospace"
    }
    for (const child of element.children ?? []) stack.push(child)
  }
  return document
}

export const docxWithMammoth = (entries: ReadonlyMap<string, Buffer>, maxHtmlDepth: number) =>
  Effect.flatMap(
    Effect.flatMap(loadParser(() => import("mammoth")), ({ default: mammoth }) => Effect.tryPromise({
      // Linked (external) files are never opened; images are dropped (turndown keeps their alt text).
      try: () =>
        mammoth.convertToHtml({ buffer: checkedZip(entries) }, {
          externalFileAccess: false,
          styleMap: docxStyleMap,
          transformDocument: markMonospaceRuns,
          convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: "" }))
        }),
      catch: unconvertible("a Word document")
    })),
    (result) => htmlToMarkdown(result.value, maxHtmlDepth)
  )

/** The targets of the document's relationships (hyperlinks among them), by id. */
const relationshipTargets = (rels: Buffer | undefined) =>
  new Map(
    rels === undefined ? [] : descendants(parseXml(rels.toString("utf8")), "Relationship")
      .map((relationship) => [relationship.attribs.Id ?? "", relationship.attribs.Target ?? ""] as const)
  )

/** The streaming path's Markdown, or `undefined` when the document holds more than it reads. */
export const docxWithoutMammoth = (entries: ReadonlyMap<string, Buffer>) =>
  Effect.flatMap(markdownEscaper, (escape) =>
    Effect.try({
      try: () => {
        const styles = readDocxStyles(entries.get("word/styles.xml")?.toString("utf8"), entries.get("word/numbering.xml")?.toString("utf8"))
        if (styles.linkedNumbering) return undefined
        const links = relationshipTargets(entries.get("word/_rels/document.xml.rels"))
        return simpleDocxToMarkdown(entries.get("word/document.xml")!.toString("utf8"), styles, links, escape)
      },
      catch: unconvertible("a Word document")
    }))

export const docxToMarkdown = (entries: ReadonlyMap<string, Buffer>, maxHtmlDepth: number) =>
  Effect.flatMap(docxWithoutMammoth(entries), (markdown) => markdown === undefined ? docxWithMammoth(entries, maxHtmlDepth) : Effect.succeed(markdown))
