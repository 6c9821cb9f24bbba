import { Effect } from "effect"
import { fileTypeFromBuffer } from "file-type"
import { extname } from "node:path"
import { Unconvertible } from "./Unconvertible.ts"

/** The formats the converter reads; `type` in the answer is one of these. */
export const formats = ["txt", "md", "csv", "json", "html", "pdf", "docx", "xlsx", "pptx"] as const
export type Format = (typeof formats)[number]

/** Where a file came from: its name and declared content type are hints, never trusted over the bytes. */
export interface Hints {
  readonly name: string
  readonly declaredType: string
}

/** Zip-based formats file-type recognises; each is told apart by its entries once unpacked. */
const zipBased = new Set(["zip", "docx", "xlsx", "pptx"])

export type TextFormat = "txt" | "md" | "csv" | "json" | "html"

/** What the bytes are: a PDF, a zip archive (an office file, by its entries), or text of a given format. */
export type Sniffed =
  | { readonly kind: "pdf" }
  | { readonly kind: "zip" }
  | { readonly kind: "text"; readonly format: TextFormat; readonly text: string }

/** The office format a zip's entries make it: its main part, as the OOXML package names it. */
export const officeFormatOf = (entries: ReadonlyMap<string, unknown>): Format | undefined =>
  entries.has("word/document.xml")
    ? "docx"
    : entries.has("xl/workbook.xml")
    ? "xlsx"
    : entries.has("ppt/presentation.xml")
    ? "pptx"
    : undefined

const hintOf = (hints: Hints): string => `${extname(hints.name).toLowerCase()} ${hints.declaredType.toLowerCase()}`

const htmlStart = /^\s*(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html|head|body)\b/i
const htmlTag = /<(html|head|body|div|p|table|h[1-6]|ul|ol|span|a|br|section|article)\b[^>]*>/i
const markdownMarks = /^(#{1,6} |```|[-*+] |\d+\. |> |\|.*\|\s*$)/m

const looksLikeJson = (text: string): boolean => {
  const start = text.trimStart()[0]
  if (start !== "{" && start !== "[") return false
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const csvDelimiters = [",", ";", "\t"] as const

/** The delimiter of a delimited text: the candidate splitting its first lines into the same number (≥ 2) of columns. */
export const csvDelimiterOf = (text: string): string | undefined => {
  const lines = text.split(/\r?\n/, 20).filter((line) => line.trim().length > 0)
  if (lines.length < 2) return undefined
  return csvDelimiters.find((delimiter) => {
    const counts = lines.map((line) => line.split(delimiter).length)
    return counts[0] >= 2 && counts.every((count) => count === counts[0])
  })
}

/** Text formats, told apart by content first; the name or declared type only settles what content leaves open. */
const textFormatOf = (text: string, hints: Hints): TextFormat => {
  const hint = hintOf(hints)
  if (looksLikeJson(text)) return "json"
  if (htmlStart.test(text) || (/\.html?\b|text\/html|xhtml/.test(hint) && htmlTag.test(text))) return "html"
  if (/\.(csv|tsv)\b|text\/(csv|tab-separated-values)/.test(hint) || csvDelimiterOf(text) !== undefined) return "csv"
  if (/\.(md|markdown)\b|text\/markdown/.test(hint) || markdownMarks.test(text)) return "md"
  return "txt"
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/** The text of a file that is valid UTF-8, else a failure (binary or another encoding). */
export const decodeText = (bytes: Uint8Array): Effect.Effect<string, Unconvertible> =>
  Effect.try({
    try: () => utf8.decode(bytes),
    catch: () => new Unconvertible({ reason: "is neither a supported document format nor UTF-8 text" })
  })

/**
 * The file's format from its bytes: binary formats by their signature
 * (file-type), zip-based office formats later by their entries, text formats
 * by their content.
 */
export const sniff = (bytes: Uint8Array, hints: Hints): Effect.Effect<Sniffed, Unconvertible> =>
  Effect.gen(function*() {
    const detected = yield* Effect.promise(() => fileTypeFromBuffer(bytes).catch(() => undefined))
    if (detected !== undefined) {
      if (detected.ext === "pdf") return { kind: "pdf" }
      if (zipBased.has(detected.ext)) return { kind: "zip" }
      if (detected.mime !== "application/xml" && !detected.mime.startsWith("text/")) {
        return yield* new Unconvertible({ reason: `is ${detected.mime}, which is not a supported document format` })
      }
    }
    const text = yield* decodeText(bytes)
    return { kind: "text", format: textFormatOf(text, hints), text }
  })
