import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const src = resolve(import.meta.dirname, "../../src")
const kernel = ["platform", "http", "storage", "auth"]

const sourceFiles = (folder: string): Array<string> =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : []
  })

/** Every module a file names: static imports and exports, `import type`, and dynamic `import(...)`. */
const specifiersOf = (code: string) =>
  [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((match) => match[1]!)

/** The top folder under src/ a relative specifier of `file` points into, if any. */
const srcFolderOf = (file: string, specifier: string) => {
  if (!specifier.startsWith(".")) return undefined
  const target = relative(src, resolve(dirname(file), specifier))
  return target.startsWith("..") ? undefined : target.split(/[\\/]/)[0]
}

describe("the kernel", () => {
  it("reads import specifiers the ways a file can write them", () => {
    const code = `import { A } from "../a/A.ts"\nimport type { B } from '../b/B.ts'\nexport { C } from "../c/C.ts"\nconst d = import("../d/D.ts")\nimport "../e/E.ts"`
    expect(specifiersOf(code)).toEqual(["../a/A.ts", "../b/B.ts", "../c/C.ts", "../d/D.ts", "../e/E.ts"])
  })

  it.each(kernel)("src/%s imports no area", (folder) => {
    const offending = sourceFiles(join(src, folder)).flatMap((file) =>
      specifiersOf(readFileSync(file, "utf8"))
        .filter((specifier) => {
          const target = srcFolderOf(file, specifier)
          return target !== undefined && !kernel.includes(target)
        })
        .map((specifier) => `${relative(src, file)} → ${specifier}`)
    )
    expect(offending).toEqual([])
  })
})
