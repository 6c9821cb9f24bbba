import { Effect } from "effect"
import { posix } from "node:path"
import { markdownTable } from "./Markdown.ts"
import { unconvertible } from "./Unconvertible.ts"
import { childElements, descendants, firstChild, parseXml, type XmlElement } from "./Xml.ts"

/**
 * PowerPoint presentations as Markdown, slide by slide in the deck's order:
 * the title placeholder as the slide's heading, body placeholders as lists,
 * text boxes as paragraphs, tables as Markdown tables, speaker notes as a
 * `> Notes:` quote.
 */

const relationshipsOf = (entries: ReadonlyMap<string, Buffer>, part: string): Array<{ readonly id: string; readonly type: string; readonly target: string }> => {
  const rels = entries.get(posix.join(posix.dirname(part), "_rels", `${posix.basename(part)}.rels`))
  if (rels === undefined) return []
  return descendants(parseXml(rels.toString("utf8")), "Relationship").map((relationship) => ({
    type: relationship.attribs.Type ?? "",
    id: relationship.attribs.Id ?? "",
    // Targets are relative to the part's folder, or absolute within the package ("/ppt/slides/slide1.xml").
    target: (relationship.attribs.Target ?? "").startsWith("/")
      ? relationship.attribs.Target!.slice(1)
      : posix.join(posix.dirname(part), relationship.attribs.Target ?? "")
  }))
}

const slideNumber = (name: string) => Number(/slide(\d+)\.xml$/.exec(name)?.[1] ?? 0)

/** The slides' parts in the deck's order (`p:sldIdLst`), else by their file numbers. */
const slideParts = (entries: ReadonlyMap<string, Buffer>): Array<string> => {
  const presentation = entries.get("ppt/presentation.xml")
  const targets = new Map(
    relationshipsOf(entries, "ppt/presentation.xml").map((relationship) => [relationship.id, relationship.target])
  )
  const ordered = presentation === undefined
    ? []
    : descendants(parseXml(presentation.toString("utf8")), "p:sldId")
      .map((slide) => targets.get(slide.attribs["r:id"] ?? ""))
      .filter((part): part is string => part !== undefined && entries.has(part))
  return ordered.length > 0
    ? ordered
    : [...entries.keys()].filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name)).sort((a, b) => slideNumber(a) - slideNumber(b))
}

const textOf = (element: XmlElement) =>
  element.children.map((node) => ("data" in node && node.type === "text" ? node.data : "")).join("")

/** A paragraph's text: its runs, fields (slide numbers, dates) and line breaks. */
const paragraphText = (paragraph: XmlElement) =>
  childElements(paragraph)
    .map((child) => child.name === "a:br" ? " " : child.name === "a:r" || child.name === "a:fld" ? descendants(child, "a:t").map((t) => textOf(t)).join("") : "")
    .join("")
    .replace(/\s+/g, " ")
    .trim()

const placeholderType = (shape: XmlElement): string | undefined => {
  const placeholder = descendants(shape, "p:ph", new Set(["p:txBody", "p:spPr"]))[0]
  return placeholder === undefined ? undefined : placeholder.attribs.type ?? "obj"
}

/** Placeholders that repeat the master's furniture, not the slide's content. */
const furniture = new Set(["sldNum", "dt", "ftr", "hdr", "sldImg"])
const titles = new Set(["title", "ctrTitle"])

/** Paragraphs of a text body, bulleted where the slide's list style puts bullets. */
const bodyLines = (body: XmlElement, bulletedByDefault: boolean): Array<string> =>
  childElements(body, "a:p").flatMap((paragraph) => {
    const text = paragraphText(paragraph)
    if (text === "") return []
    const properties = firstChild(paragraph, "a:pPr")
    const level = Number(properties?.attribs.lvl ?? 0) || 0
    const bullet = properties === undefined
      ? undefined
      : firstChild(properties, "a:buNone") ? "none" : firstChild(properties, "a:buAutoNum") ? "1." : firstChild(properties, "a:buChar") ? "-" : undefined
    const marker = bullet === "none" ? undefined : bullet ?? (bulletedByDefault ? "-" : undefined)
    return [marker === undefined ? text : `${"  ".repeat(Math.min(level, 8))}${marker} ${text}`]
  })

/** Consecutive list items stay together; anything else is its own paragraph. */
const joinLines = (lines: ReadonlyArray<string>) =>
  lines.reduce((text, line, index) => {
    if (index === 0) return line
    const listItems = /^\s*(-|1\.) /.test(line) && /^\s*(-|1\.) /.test(lines[index - 1])
    return `${text}${listItems ? "\n" : "\n\n"}${line}`
  }, "")

const tableMarkdown = (table: XmlElement) =>
  markdownTable(childElements(table, "a:tr").map((row) =>
    childElements(row, "a:tc").map((cell) =>
      // A cell merged into its neighbour repeats nothing: the text shows once, in the first cell.
      cell.attribs.hMerge === "1" || cell.attribs.vMerge === "1"
        ? ""
        : descendants(cell, "a:p").map(paragraphText).filter((text) => text !== "").join(" ")
    )
  ))

interface Slide {
  readonly title: string | undefined
  readonly blocks: Array<string>
}

/** The slide's shapes in their order (groups opened), as a title and Markdown blocks. */
const readSlide = (xml: string): Slide => {
  const tree = descendants(parseXml(xml), "p:spTree")[0]
  let title: string | undefined
  const blocks: Array<string> = []
  if (tree === undefined) return { title, blocks }
  const stack: Array<XmlElement> = []
  const pushInOrder = (shapes: ReadonlyArray<XmlElement>) => {
    for (let index = shapes.length - 1; index >= 0; index--) stack.push(shapes[index])
  }
  pushInOrder(childElements(tree))
  while (stack.length > 0) {
    const shape = stack.pop()!
    if (shape.name === "p:grpSp") {
      pushInOrder(childElements(shape))
      continue
    }
    const type = placeholderType(shape)
    if (type !== undefined && furniture.has(type)) continue
    if (shape.name === "p:graphicFrame") {
      for (const table of descendants(shape, "a:tbl")) blocks.push(tableMarkdown(table))
      continue
    }
    const body = firstChild(shape, "p:txBody")
    if (shape.name !== "p:sp" || body === undefined) continue
    if (type !== undefined && titles.has(type) && title === undefined) {
      title = childElements(body, "a:p").map(paragraphText).filter((text) => text !== "").join(" ")
      continue
    }
    const lines = bodyLines(body, type === "obj" || type === "body")
    if (lines.length > 0) blocks.push(joinLines(lines))
  }
  return { title, blocks }
}

/** The speaker notes of a slide: the notes page's body placeholder. */
const notesOf = (entries: ReadonlyMap<string, Buffer>, slidePart: string): string | undefined => {
  const part = relationshipsOf(entries, slidePart).find((relationship) => relationship.type.endsWith("/notesSlide"))?.target
  const xml = part === undefined ? undefined : entries.get(part)
  if (xml === undefined) return undefined
  const paragraphs = descendants(parseXml(xml.toString("utf8")), "p:sp")
    .filter((shape) => placeholderType(shape) === "body")
    .flatMap((shape) => descendants(shape, "a:p").map(paragraphText))
    .filter((text) => text !== "")
  return paragraphs.length === 0 ? undefined : paragraphs.map((text, index) => `> ${index === 0 ? "Notes: " : ""}${text}`).join("\n>\n")
}

export const pptxToMarkdown = (entries: ReadonlyMap<string, Buffer>) =>
  Effect.try({
    try: () =>
      slideParts(entries).map((part, index) => {
        const slide = readSlide(entries.get(part)!.toString("utf8"))
        const notes = notesOf(entries, part)
        return [`## ${slide.title || `Slide ${index + 1}`}`, ...slide.blocks, ...(notes === undefined ? [] : [notes])].join("\n\n")
      }).join("\n\n"),
    catch: unconvertible("a PowerPoint presentation")
  })
