import { Effect } from "effect"
import { htmlToMarkdown } from "./Markdown.ts"
import { checkedZip, loadParser } from "./Parsers.ts"
import { unconvertible } from "./Unconvertible.ts"

/** Word documents as Markdown: mammoth's HTML through the shared HTML converter. */

/**
 * Beyond mammoth's defaults (headings, lists, tables): the document's title
 * and subtitle are headings, and code (code styles of Word, LibreOffice and
 * pandoc, or runs in a monospace font) stays code.
 */
export const docxStyleMap = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => h2:fresh",
  "p[style-name='Source Code'] => pre:separator('\\n')",
  "p[style-name='HTML Preformatted'] => pre:separator('\\n')",
  "p[style-name='Preformatted Text'] => pre:separator('\\n')",
  "p[style-name='Code'] => pre:separator('\\n')",
  "r[style-name='Verbatim Char'] => code",
  "r[style-name='HTML Code'] => code",
  "r[style-name='Source Text'] => code",
  "r[style-name='Monospace'] => code"
]

/** Fonts that mark a run as code when no style says so. */
export const isMonospaceFont = (font: string | undefined) =>
  font !== undefined &&
  /^(courier|consolas|menlo|monaco|lucida (console|sans typewriter)|andale mono|(dejavu|liberation|noto|ubuntu|roboto|sf|pt|droid|nimbus) (sans )?mono|source code|fira (code|mono)|jetbrains mono|inconsolata|cascadia)/i
    .test(font.trim())

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
