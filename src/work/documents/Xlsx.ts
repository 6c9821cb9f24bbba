import { Effect } from "effect"
import type { Cell, CellValue, Workbook } from "exceljs"
import { checkedZip, loadParser } from "./Parsers.ts"
import { markdownTable } from "./Markdown.ts"
import { unconvertible } from "./Unconvertible.ts"

/** Excel workbooks (exceljs) as one Markdown table per sheet, each cell as Excel displays it. */

type Formatter = typeof import("numfmt")

/** exceljs types its input as an `ArrayBuffer` (and reads Node buffers too): hand it exactly the zip's bytes. */
const asArrayBuffer = (bytes: Buffer): ArrayBuffer => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

/** A number through the cell's format code (numfmt, Excel's rules); a code numfmt cannot read shows the number plainly. */
const formatted = (numfmt: Formatter, code: string, value: number) => {
  try {
    return numfmt.format(code, value, { dateErrorNumber: true })
  } catch {
    return numfmt.format("General", value)
  }
}

/** A date cell: exceljs gives a UTC `Date`; Excel stores it as a serial number, which the format code reads. */
const formattedDate = (numfmt: Formatter, code: string | undefined, date: Date) => {
  const serial = Number.isNaN(date.getTime()) ? undefined : numfmt.dateToSerial(date, { ignoreTimezone: true })
  return serial === undefined ? "" : formatted(numfmt, code !== undefined && numfmt.isDateFormat(code) ? code : "yyyy-mm-dd", serial)
}

/** What a value shows in a cell of the given format code: a formula shows its cached result, or itself when none is cached. */
const displayed = (numfmt: Formatter, value: CellValue, code: string | undefined, formula: () => string): string => {
  if (value === null || value === undefined) return ""
  if (value instanceof Date) return formattedDate(numfmt, code, value)
  switch (typeof value) {
    case "number":
      return formatted(numfmt, code ?? "General", value)
    case "boolean":
      return value ? "TRUE" : "FALSE"
    case "string":
      return value
  }
  if ("richText" in value) return value.richText.map((run) => run.text).join("")
  if ("error" in value) return value.error
  if ("formula" in value || "sharedFormula" in value) {
    return value.result === undefined ? `=${formula()}` : displayed(numfmt, value.result as CellValue, code, formula)
  }
  if ("hyperlink" in value) return displayed(numfmt, value.text as CellValue, code, formula)
  return ""
}

const cellText = (numfmt: Formatter, cell: Cell) =>
  displayed(numfmt, cell.value, cell.numFmt === "" ? undefined : cell.numFmt, () => cell.formula)

/** Merged cells: exceljs repeats the first cell's value in every cell of the range; only the first one shows it. */
const repeatsMergedValue = (cell: Cell) => cell.isMerged && cell.master !== cell

const sheetsToMarkdown = (numfmt: Formatter, workbook: Workbook) =>
  workbook.worksheets.map((sheet) => {
    // Only the cells that hold something, and only the columns where some row does: one cell in
    // column XFD would otherwise make 16,384 cells of its row (exceljs builds each empty one).
    const rows: Array<Map<number, string>> = []
    // Rows whose one cell is merged across columns: a title over the table, not a row of it.
    const titleRows = new Set<Map<number, string>>()
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells = new Map<number, string>()
      let merged = false
      row.eachCell({ includeEmpty: false }, (cell, column) => {
        if (repeatsMergedValue(cell)) return void (merged = true)
        const text = cellText(numfmt, cell)
        if (text === "") return
        cells.set(column, text)
      })
      if (cells.size === 0) return
      rows.push(cells)
      if (cells.size === 1 && merged) titleRows.add(cells)
    })
    const titles: Array<string> = []
    while (rows.length > 1 && titleRows.has(rows[0])) titles.push(rows.shift()!.values().next().value!)
    const columns = [...new Set(rows.flatMap((cells) => [...cells.keys()]))].sort((a, b) => a - b)
    const table = markdownTable(rows.map((cells) => columns.map((column) => cells.get(column) ?? "")))
    return [`## ${sheet.name}`, ...titles, table].join("\n\n").trim()
  }).join("\n\n")

export const xlsxToMarkdown = (entries: ReadonlyMap<string, Buffer>) =>
  Effect.gen(function*() {
    const [{ default: ExcelJS }, numfmt] = yield* loadParser(() => Promise.all([import("exceljs"), import("numfmt")]))
    const workbook = yield* Effect.tryPromise({
      try: () => new ExcelJS.Workbook().xlsx.load(asArrayBuffer(checkedZip(entries))),
      catch: unconvertible("an Excel workbook")
    })
    return yield* Effect.try({ try: () => sheetsToMarkdown(numfmt, workbook), catch: unconvertible("an Excel workbook") })
  })
