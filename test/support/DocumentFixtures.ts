import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from "docx"
import ExcelJS from "exceljs"
import { zipSync } from "fflate"
import PDFDocument from "pdfkit"
import PptxModule from "pptxgenjs"

// pptxgenjs's types describe an ES default export that TypeScript reads as CommonJS: take the class either way.
const PptxGenJS = ((PptxModule as unknown as { default?: unknown }).default ?? PptxModule) as typeof PptxModule.default

/** Real files of every format the converter reads, written by real writers (tests and benchmarks). */

export interface PdfOptions {
  /** Encrypts the file: it opens only with this password. */
  readonly userPassword?: string
  /** Content streams uncompressed (bigger files for the same text). */
  readonly uncompressed?: boolean
}

/** A PDF with one page per entry, each page's lines of text. */
export const pdfFile = (pages: ReadonlyArray<ReadonlyArray<string>>, options: PdfOptions = {}) =>
  new Promise<Buffer>((resolve, reject) => {
    const pdf = new PDFDocument({
      autoFirstPage: false,
      compress: options.uncompressed !== true,
      ...(options.userPassword === undefined ? {} : { userPassword: options.userPassword, ownerPassword: "owner" })
    })
    const chunks: Array<Buffer> = []
    pdf.on("data", (chunk: Buffer) => chunks.push(chunk))
    pdf.on("end", () => resolve(Buffer.concat(chunks)))
    pdf.on("error", reject)
    for (const lines of pages) {
      pdf.addPage()
      for (const line of lines) pdf.text(line)
    }
    pdf.end()
  })

/** A Word document: a heading, paragraphs, a bulleted list and a table. */
export const docxFile = (options: {
  readonly title: string
  readonly paragraphs: ReadonlyArray<string>
  readonly bullets?: ReadonlyArray<string>
  readonly table?: ReadonlyArray<ReadonlyArray<string>>
}) =>
  Packer.toBuffer(
    new Document({
      sections: [{
        children: [
          new Paragraph({ text: options.title, heading: HeadingLevel.HEADING_1 }),
          ...options.paragraphs.map((text) => new Paragraph({ text, alignment: AlignmentType.LEFT })),
          ...(options.bullets ?? []).map((text) => new Paragraph({ text, bullet: { level: 0 } })),
          ...(options.table === undefined ? [] : [
            new Table({
              rows: options.table.map((row) =>
                new TableRow({ children: row.map((text) => new TableCell({ children: [new Paragraph(text)] })) })
              )
            })
          ])
        ]
      }]
    })
  )

/** An Excel workbook with the given sheets (name → rows). */
export const xlsxFile = async (sheets: Record<string, ReadonlyArray<ReadonlyArray<string | number>>>) => {
  const workbook = new ExcelJS.Workbook()
  for (const [name, rows] of Object.entries(sheets)) workbook.addWorksheet(name).addRows(rows.map((row) => [...row]))
  return Buffer.from(await workbook.xlsx.writeBuffer())
}

/** A one-sheet Excel workbook with values at the given (1-based) rows and columns, nothing elsewhere. */
export const sparseXlsxFile = async (cells: ReadonlyArray<readonly [row: number, column: number, value: string]>) => {
  const sheet = new ExcelJS.Workbook()
  const worksheet = sheet.addWorksheet("Sparse")
  for (const [row, column, value] of cells) worksheet.getCell(row, column).value = value
  return Buffer.from(await sheet.xlsx.writeBuffer())
}

/** A PowerPoint presentation: one slide per entry, each with its lines of text. */
export const pptxFile = async (slides: ReadonlyArray<ReadonlyArray<string>>) => {
  const presentation = new PptxGenJS()
  for (const lines of slides) {
    const slide = presentation.addSlide()
    lines.forEach((line, index) => slide.addText(line, { x: 0.5, y: 0.5 + index, w: 8, h: 0.8 }))
  }
  return (await presentation.write({ outputType: "nodebuffer" })) as Buffer
}

/** A zip archive of the given entries, deflated at the highest level (the way zip bombs are made). */
export const zipFile = (entries: Record<string, Uint8Array>) => Buffer.from(zipSync(entries, { level: 9 }))

/**
 * The same archive with every declared uncompressed size (local headers and
 * central directory) rewritten to 1 byte: a zip that lies about its sizes.
 */
export const withLyingSizes = (zip: Buffer) => {
  const copy = Buffer.from(zip)
  for (let offset = 0; offset + 4 <= copy.length; offset++) {
    const signature = copy.readUInt32LE(offset)
    if (signature === 0x04034b50) copy.writeUInt32LE(1, offset + 22)
    if (signature === 0x02014b50) copy.writeUInt32LE(1, offset + 24)
  }
  return copy
}
