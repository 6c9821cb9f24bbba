import { Effect } from "effect"
import { parse as parseCsv } from "csv-parse/sync"
import { docxToMarkdown } from "./Docx.ts"
import { csvDelimiterOf, type Hints, officeFormatOf, sniff, type TextFormat } from "./Formats.ts"
import { htmlToMarkdown, markdownTable } from "./Markdown.ts"
import { pdfToMarkdown } from "./Pdf.ts"
import { pptxToMarkdown } from "./Pptx.ts"
import { unzipBounded, type ZipLimits } from "./SafeZip.ts"
import { Unconvertible, unconvertible } from "./Unconvertible.ts"
import { xlsxToMarkdown } from "./Xlsx.ts"

/** What one conversion may use, beyond the worker's own memory and time limits. */
export interface ConversionLimits extends ZipLimits {
  readonly maxPdfPages: number
  readonly maxHtmlDepth: number
}

export interface Converted {
  readonly type: string
  readonly content: string
}

const normalized = (text: string) => text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").trim()

const csvToMarkdown = (text: string) =>
  Effect.try({
    try: () =>
      markdownTable(parseCsv(text, {
        delimiter: csvDelimiterOf(text) ?? ",",
        bom: true,
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true
      }) as Array<Array<string>>),
    catch: unconvertible("CSV")
  })

const jsonToMarkdown = (text: string) =>
  Effect.try({ try: () => `\`\`\`json\n${JSON.stringify(JSON.parse(text), null, 2)}\n\`\`\``, catch: unconvertible("JSON") })

const textToMarkdown = (format: TextFormat, text: string, limits: ConversionLimits): Effect.Effect<string, Unconvertible> => {
  switch (format) {
    case "txt":
    case "md":
      return Effect.succeed(text)
    case "csv":
      return csvToMarkdown(text)
    case "json":
      return jsonToMarkdown(text)
    case "html":
      return htmlToMarkdown(text, limits.maxHtmlDepth)
  }
}

const officeToMarkdown = (bytes: Buffer, limits: ConversionLimits) =>
  Effect.gen(function*() {
    const entries = yield* unzipBounded(bytes, limits)
    const format = officeFormatOf(entries)
    switch (format) {
      case "docx":
        return { type: format, content: yield* docxToMarkdown(entries, limits.maxHtmlDepth) }
      case "xlsx":
        return { type: format, content: yield* xlsxToMarkdown(entries) }
      case "pptx":
        return { type: format, content: yield* pptxToMarkdown(entries) }
      default:
        return yield* new Unconvertible({ reason: "is a zip archive but not a Word, Excel or PowerPoint file" })
    }
  })

/** A file's content as Markdown-flavoured text, by the format its bytes show. */
export const convert = (bytes: Buffer, hints: Hints, limits: ConversionLimits): Effect.Effect<Converted, Unconvertible> =>
  Effect.gen(function*() {
    if (bytes.length === 0) return yield* new Unconvertible({ reason: "is empty" })
    const sniffed = yield* sniff(bytes, hints)
    switch (sniffed.kind) {
      case "pdf":
        return { type: "pdf", content: normalized(yield* pdfToMarkdown(bytes, limits)) }
      case "zip": {
        const converted = yield* officeToMarkdown(bytes, limits)
        return { ...converted, content: normalized(converted.content) }
      }
      case "text":
        return {
          type: sniffed.format,
          content: normalized(yield* textToMarkdown(sniffed.format, normalized(sniffed.text), limits))
        }
    }
  })
