// Plain-text tables and result files shared by the benchmark scripts.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { root } from "./servers.ts"

// For the scripts that still read it from here; the environment's parsing lives in env.ts.

/** Columns padded to their widest cell; numbers, ranges, percentages and "-" are right-aligned. */
export const formatTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const numeric = /^(-|[-+]?[\d,.]+(–[\d,.]+)?%?)$/
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (numeric.test(cell) ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join("  ")
      .trimEnd()
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n")
}

export const integer = (value: number) => Math.round(value).toLocaleString("en-US")
export const fixed = (value: number, digits = 1) => value.toFixed(digits)

export const resultsDir = join(root, "bench-results")

/** Writes `bench-results/<prefix>-<timestamp>.json` and answers its path. */
export const writeResults = (prefix: string, startedAt: Date, results: unknown) => {
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `${prefix}-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  return file
}
