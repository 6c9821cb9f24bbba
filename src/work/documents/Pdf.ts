import { Effect } from "effect"
import { loadParser } from "./Parsers.ts"
import { layoutToMarkdown, type PdfPage, type TextRun } from "./PdfLayout.ts"
import { Unconvertible, unconvertible } from "./Unconvertible.ts"

/** Failures pdf.js reports by name; anything else is a corrupt file. */
const pdfFailure = (cause: unknown) =>
  cause instanceof Error && cause.name === "PasswordException"
    ? new Unconvertible({ reason: "is an encrypted PDF (password protected)" })
    : unconvertible("a PDF")(cause)

/** A PDF's text as Markdown (see `PdfLayout`); a file past `maxPdfPages` is refused before any page is read. */
export const pdfToMarkdown = (bytes: Uint8Array, limits: { readonly maxPdfPages: number }) =>
  Effect.acquireUseRelease(
    Effect.flatMap(loadParser(() => import("unpdf")), ({ getDocumentProxy }) => Effect.tryPromise({
      // No fonts, no network: text extraction needs neither (the bytes are given, no URL).
      try: () =>
        getDocumentProxy(new Uint8Array(bytes), {
          disableFontFace: true,
          useSystemFonts: false,
          verbosity: 0
        }),
      catch: pdfFailure
    })),
    (pdf) =>
      Effect.gen(function*() {
        if (pdf.numPages > limits.maxPdfPages) {
          return yield* new Unconvertible({ reason: `has ${pdf.numPages} pages; at most ${limits.maxPdfPages} are accepted` })
        }
        const pages: Array<PdfPage> = []
        for (let number = 1; number <= pdf.numPages; number++) {
          const [width, content] = yield* Effect.tryPromise({
            try: () => pdf.getPage(number).then((page) => Promise.all([page.view[2] - page.view[0], page.getTextContent()])),
            catch: pdfFailure
          })
          const runs: Array<TextRun> = []
          for (const item of content.items) {
            if (!("str" in item)) continue
            const [, , c, d, x, y] = item.transform as [number, number, number, number, number, number]
            const monospace = content.styles[item.fontName]?.fontFamily === "monospace"
            runs.push({ text: item.str, x, y, width: item.width, size: Math.hypot(c, d), monospace })
          }
          pages.push({ width, runs })
        }
        return layoutToMarkdown(pages)
      }),
    (pdf) => Effect.promise(() => pdf.loadingTask.destroy().catch(() => undefined))
  )


