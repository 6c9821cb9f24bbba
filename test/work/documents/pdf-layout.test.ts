import { describe, expect, it } from "@effect/vitest"
import { layoutToMarkdown, type TextRun } from "../../../src/work/documents/PdfLayout.ts"

/** A line of body text (11 pt) at the given baseline; one run, or several at the given offsets. */
const line = (y: number, text: string, x = 72, options: Partial<TextRun> = {}): TextRun => ({
  text,
  x,
  y,
  width: text.length * 5.5,
  size: 11,
  monospace: false,
  ...options
})

/** A page of body lines 14 pt apart, under a running header and over a page number. */
const page = (number: number, body: ReadonlyArray<string>) => ({
  width: 200,
  runs: [
    line(780, "Field Guide — Chapter 1"),
    ...body.map((text, index) => line(700 - index * 14, text)),
    line(40, String(number), 100)
  ]
})

describe("PDF layout to Markdown", () => {
  it("drops running headers and page numbers, joins paragraphs across lines and pages, mends hyphenation and ligatures", () => {
    const markdown = layoutToMarkdown([
      page(1, ["The \uFB01rst \uFB02ow of the pro-", "cess starts the pump and the", "valve opens"]),
      page(2, ["slowly. A low-", "Voltage supply is ﬁne."])
    ])
    expect(markdown).toBe("The first flow of the process starts the pump and the valve opens slowly. A low- Voltage supply is fine.")
  })

  it("headings from larger type, bullets as list items, dot leaders as a contents list, aligned columns as a table", () => {
    const markdown = layoutToMarkdown([{ width: 612, runs: [
      line(760, "User Manual", 72, { size: 24, width: 150 }),
      line(720, "Contents", 72, { size: 16, width: 80 }),
      line(700, "Setup . . . . . . . . . . 3"),
      line(686, "Wiring . . . . . . . . . 4", 90),
      line(650, "Setup", 72, { size: 16, width: 50 }),
      line(630, "• Unpack the unit."),
      line(616, "• Mount it."),
      line(590, "Size", 72), line(590, "Weight", 200),
      line(576, "Small", 72), line(576, "2 kg", 200),
      line(562, "Large", 72), line(562, "5 kg", 200),
      line(530, "npm install", 72, { monospace: true })
    ] }])
    expect(markdown).toBe([
      "# User Manual",
      "## Contents",
      "- Setup\n  - Wiring",
      "## Setup",
      "- Unpack the unit.\n- Mount it.",
      "| Size | Weight |\n| --- | --- |\n| Small | 2 kg |\n| Large | 5 kg |",
      "```\nnpm install\n```"
    ].join("\n\n"))
  })
})
