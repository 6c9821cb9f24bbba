import { childElements, descendants, firstChild, parseXml } from "./Xml.ts"

/**
 * How Word styles read as Markdown, shared by both DOCX paths: mammoth's
 * style map is written from these names, and the streaming path reads the
 * same names from `word/styles.xml` and `word/numbering.xml`.
 */

/** Paragraph styles of code blocks (Word, LibreOffice, pandoc). */
const codeParagraphNames = ["Source Code", "HTML Preformatted", "Preformatted Text", "Code"]
/** Character styles of inline code; `Monospace` marks runs set in a monospace font without a style. */
const codeRunNames = ["Verbatim Char", "HTML Code", "Source Text", "Monospace"]

/** Beyond mammoth's defaults (headings, lists, tables): title and subtitle as headings, code kept as code. */
export const docxStyleMap = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => h2:fresh",
  ...codeParagraphNames.map((name) => `p[style-name='${name}'] => pre:separator('\\n')`),
  ...codeRunNames.map((name) => `r[style-name='${name}'] => code`)
]

/** Fonts that mark a run as code when no style says so. */
export const isMonospaceFont = (font: string | undefined) =>
  font !== undefined &&
  /^(courier|consolas|menlo|monaco|lucida (console|sans typewriter)|andale mono|(dejavu|liberation|noto|ubuntu|roboto|sf|pt|droid|nimbus) (sans )?mono|source code|fira (code|mono)|jetbrains mono|inconsolata|cascadia)/i
    .test(font.trim())

export interface DocxStyles {
  /** Style names by style id. */
  readonly names: ReadonlyMap<string, string>
  readonly codeRunNames: ReadonlySet<string>
  /** Whether each list level is ordered: by numbering id, then level. */
  readonly levels: ReadonlyMap<string, ReadonlyMap<string, boolean>>
  /** List levels that paragraph styles carry (`w:lvl/w:pStyle`). */
  readonly levelsByStyle: ReadonlyMap<string, { readonly level: string; readonly ordered: boolean }>
  /** Numbering that links to numbering styles, which only mammoth follows. */
  readonly linkedNumbering: boolean
}

export const readDocxStyles = (stylesXml: string | undefined, numberingXml: string | undefined): DocxStyles => {
  const names = new Map<string, string>()
  if (stylesXml !== undefined) {
    for (const style of descendants(parseXml(stylesXml), "w:style")) {
      const name = firstChild(style, "w:name")?.attribs["w:val"]
      const id = style.attribs["w:styleId"]
      if (id !== undefined && name !== undefined) names.set(id, name)
    }
  }
  const abstract = new Map<string, Map<string, boolean>>()
  const levelsByStyle = new Map<string, { level: string; ordered: boolean }>()
  const levels = new Map<string, Map<string, boolean>>()
  let linkedNumbering = false
  if (numberingXml !== undefined) {
    const numbering = parseXml(numberingXml)
    for (const definition of descendants(numbering, "w:abstractNum")) {
      const byLevel = new Map<string, boolean>()
      if (firstChild(definition, "w:numStyleLink") !== undefined) linkedNumbering = true
      for (const level of descendants(definition, "w:lvl")) {
        const index = level.attribs["w:ilvl"] ?? "0"
        const ordered = firstChild(level, "w:numFmt")?.attribs["w:val"] !== "bullet"
        if (!byLevel.has(index) || level.attribs["w:ilvl"] !== undefined) byLevel.set(index, ordered)
        const style = firstChild(level, "w:pStyle")?.attribs["w:val"]
        if (style !== undefined) levelsByStyle.set(style, { level: index, ordered })
      }
      abstract.set(definition.attribs["w:abstractNumId"] ?? "", byLevel)
    }
    for (const num of childElements(descendants(numbering, "w:numbering")[0] ?? { children: [] }, "w:num")) {
      const definition = abstract.get(firstChild(num, "w:abstractNumId")?.attribs["w:val"] ?? "")
      if (definition !== undefined) levels.set(num.attribs["w:numId"] ?? "", definition)
    }
  }
  return { names, codeRunNames: new Set(codeRunNames), levels, levelsByStyle, linkedNumbering }
}

export type ParagraphKind =
  | { readonly type: "heading"; readonly level: number }
  | { readonly type: "code" }
  | { readonly type: "item"; readonly level: number; readonly ordered: boolean }
  | { readonly type: "paragraph" }

const headingName = /^[Hh]eading ([1-6])$/
const headingId = /^Heading([1-6])$/

/** What mammoth makes of a paragraph: the first rule of its style map (ours, then its defaults) that matches. */
export const paragraphKind = (
  styles: DocxStyles,
  styleId: string | undefined,
  numId: string | undefined,
  level: string | undefined
): ParagraphKind => {
  const name = styleId === undefined ? undefined : styles.names.get(styleId)
  if (name === "Title") return { type: "heading", level: 1 }
  if (name === "Subtitle") return { type: "heading", level: 2 }
  if (name !== undefined && codeParagraphNames.includes(name)) return { type: "code" }
  const heading = headingId.exec(styleId ?? "") ?? headingName.exec(name ?? "")
  if (heading !== null) return { type: "heading", level: Number(heading[1]) }
  if (styleId === "Heading" || name === "Heading") return { type: "heading", level: 1 }
  const list = numId !== undefined && level !== undefined
    ? { level, ordered: styles.levels.get(numId)?.get(level) }
    : (styleId === undefined ? undefined : styles.levelsByStyle.get(styleId)) ??
      (numId === undefined ? undefined : { level: "0", ordered: styles.levels.get(numId)?.get("0") })
  const depth = Number(list?.level)
  if (list?.ordered === undefined || !Number.isInteger(depth) || depth < 0 || depth > 4) return { type: "paragraph" }
  return { type: "item", level: depth, ordered: list.ordered }
}
