import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { convert } from "../../../src/work/documents/Converters.ts"
import { docxWithMammoth, docxWithoutMammoth } from "../../../src/work/documents/Docx.ts"
import { unzipBounded } from "../../../src/work/documents/SafeZip.ts"
import { documentDefaults } from "../../../src/work/documents/DocumentsConfig.ts"
import { docxFile, xlsxFile, zipFile } from "../../support/DocumentFixtures.ts"

/**
 * Golden files: real documents made by independent tools (pandoc,
 * LibreOffice, python-docx, openpyxl; a TeX manual from Debian), see
 * `test/fixtures/documents/make.sh`, each next to the Markdown a careful
 * reader accepted (`<file>.md`). `UPDATE_GOLDEN=1` rewrites them after a
 * deliberate change, to be read again before committing.
 */

const fixtures = join(import.meta.dirname, "../../fixtures/documents")
const documents = readdirSync(fixtures).filter((name) => /\.(pdf|docx|xlsx|pptx)$/.test(name)).sort()

const limits = {
  maxEntries: documentDefaults.maxZipEntries,
  maxUnzippedBytes: documentDefaults.maxUnzippedBytes,
  maxPdfPages: documentDefaults.maxPdfPages,
  maxHtmlDepth: 256
}

const converted = (name: string) =>
  Effect.map(convert(readFileSync(join(fixtures, name)), { name, declaredType: "" }, limits), (result) => result.content)

const entriesOf = (bytes: Buffer) => unzipBounded(bytes, { maxEntries: 2000, maxUnzippedBytes: 100_000_000 })

describe("document conversion golden files", () => {
  it("covers every format with real-world files", () => {
    expect(new Set(documents.map((name) => name.split(".").at(-1)))).toEqual(new Set(["pdf", "docx", "xlsx", "pptx"]))
  })

  for (const name of documents) {
    it.effect(`${name} converts to its golden Markdown`, () =>
      Effect.gen(function*() {
        const content = yield* converted(name)
        const golden = join(fixtures, `${name}.md`)
        if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden, `${content}\n`)
        expect(content).toBe(readFileSync(golden, "utf8").replace(/\n$/, ""))
      }))
  }
})

describe("the streaming path for plain Word documents", () => {
  it.effect("writes what mammoth writes: headings, title, lists, bold, italic, links, code, escapes, line breaks", () =>
    Effect.gen(function*() {
      const generated = yield* Effect.promise(() =>
        docxFile({
          title: "Plain *text* #1",
          paragraphs: ["1. Not a list", "Under_scores and [brackets]", "  spaced   out  "],
          bullets: ["first", "second"]
        })
      )
      for (const bytes of [readFileSync(join(fixtures, "memo.docx")), readFileSync(join(fixtures, "notes.docx")), generated]) {
        const entries = yield* entriesOf(bytes)
        const streamed = yield* docxWithoutMammoth(entries)
        expect(streamed).toBeDefined()
        expect(streamed).toBe(yield* docxWithMammoth(entries, 256))
      }
    }))

  it.effect("malformed XML is not guessed at: the file answers why it cannot be converted", () =>
    Effect.gen(function*() {
      const original = yield* entriesOf(readFileSync(join(fixtures, "memo.docx")))
      const entries = Object.fromEntries([...original].map(([name, bytes]) => [name, new Uint8Array(bytes)]))
      const xml = original.get("word/document.xml")!
      entries["word/document.xml"] = new Uint8Array(xml.subarray(0, Math.floor(xml.length / 2)))
      const failure = yield* Effect.flip(convert(zipFile(entries), { name: "cut.docx", declaredType: "" }, limits))
      expect(failure.reason).toBe("could not be read as a Word document (corrupt or unsupported)")
    }))

  it.effect("leaves documents with tables (and other complex content) to mammoth", () =>
    Effect.gen(function*() {
      const entries = yield* entriesOf(readFileSync(join(fixtures, "guide.docx")))
      expect(yield* docxWithoutMammoth(entries)).toBeUndefined()
      expect(yield* converted("guide.docx")).toContain("| Part | Code | Stock |")
    }))
})

describe("Excel sheets", () => {
  it.effect("a first row of one cell is the table's header unless it is merged across columns (a title)", () =>
    Effect.gen(function*() {
      const bytes = yield* Effect.promise(() => xlsxFile({ People: [["Name"], ["Ada", 42]] }))
      const { content } = yield* convert(bytes, { name: "people.xlsx", declaredType: "" }, limits)
      expect(content).toBe("## People\n\n| Name |  |\n| --- | --- |\n| Ada | 42 |")
      expect(yield* converted("budget.xlsx")).toMatch(/^## Budget\n\nOffice budget 2026\n\n\| Item \| Ordered \| Cost \| Share \|/)
    }))
})

describe("hostile office XML", () => {
  const lols = `<!DOCTYPE lolz [<!ENTITY lol "lol">${
    Array.from({ length: 9 }, (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level === 0 ? "" : level};`.repeat(10)}">`).join("")
  }]>`

  /** The fixture with a billion-laughs DOCTYPE in one part, and a text of that part replaced by `&lol9;`. */
  const withLaughs = (name: string, part: string, text: string) =>
    Effect.map(entriesOf(readFileSync(join(fixtures, name))), (original) => {
      const entries = Object.fromEntries([...original].map(([entry, bytes]) => [entry, new Uint8Array(bytes)]))
      const xml = original.get(part)!.toString("utf8")
      expect(xml).toContain(text)
      entries[part] = new TextEncoder().encode(
        xml.replace(/^<\?xml[^>]*\?>/, `<?xml version="1.0"?>${lols}`).replace(text, "&lol9;")
      )
      return { original, zip: zipFile(entries), entries: new Map(Object.entries(entries).map(([entry, bytes]) => [entry, Buffer.from(bytes)])) }
    })

  /** Converted small and fast, or refused: never a billion laughs. */
  const expectContained = <A, E>(conversion: Effect.Effect<A, E>, size: (value: A) => number) =>
    Effect.gen(function*() {
      const started = Date.now()
      const exit = yield* Effect.exit(conversion)
      expect(Date.now() - started).toBeLessThan(5_000)
      if (Exit.isSuccess(exit)) expect(size(exit.value)).toBeLessThan(100_000)
      else expect(String(exit.cause)).toContain("Unconvertible")
    })

  for (const [name, part, text] of [
    ["memo.docx", "word/document.xml", "Release Notes 4.2"],
    ["budget-libreoffice.xlsx", "xl/sharedStrings.xml", "Office budget 2026"],
    ["deck.pptx", "ppt/slides/slide2.xml", "Highlights"]
  ] as const) {
    it.effect(`${name}: entities declared in a DOCTYPE are never expanded (billion laughs)`, () =>
      Effect.gen(function*() {
        const hostile = yield* withLaughs(name, part, text)
        yield* expectContained(convert(hostile.zip, { name, declaredType: "" }, limits), (converted) => converted.content.length)
        if (name === "memo.docx") yield* expectContained(docxWithMammoth(hostile.entries, 256), (markdown) => markdown.length)
      }))
  }
})
