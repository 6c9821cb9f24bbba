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

/** The file under src/ a relative specifier of `file` points to, if any (relative to src/). */
const srcTargetOf = (file: string, specifier: string) => {
  if (!specifier.startsWith(".")) return undefined
  const target = relative(src, resolve(dirname(file), specifier))
  return target.startsWith("..") ? undefined : target
}

const topFolderOf = (path: string) => path.split(/[\\/]/)[0]!

/** Folders of src/ that only group areas (they hold folders, no module of their own). */
const domains = new Set(readdirSync(src, { withFileTypes: true }).filter((entry) =>
  entry.isDirectory() && readdirSync(join(src, entry.name), { withFileTypes: true }).every((inner) => inner.isDirectory())
).map((entry) => entry.name))

/** The area a file of src/ belongs to: its top folder, or within a domain's folder, the domain and the area. */
const areaOf = (path: string) => {
  const [top, next] = path.split(/[\\/]/)
  return domains.has(top!) && next !== undefined ? `${top}/${next}` : top!
}

/** Every file of src/ (relative to src/) and the files of src/ it imports. */
const importGraph = (): ReadonlyMap<string, ReadonlySet<string>> =>
  new Map(sourceFiles(src).map((file) => [
    relative(src, file),
    new Set(specifiersOf(readFileSync(file, "utf8")).flatMap((specifier) => srcTargetOf(file, specifier) ?? []))
  ]))

/** The graph with each node replaced by `group(node)`, edges within a group dropped. */
const grouped = (graph: ReadonlyMap<string, ReadonlySet<string>>, group: (node: string) => string) => {
  const result = new Map<string, Set<string>>()
  for (const [node, targets] of graph) {
    const edges = result.get(group(node)) ?? new Set<string>()
    result.set(group(node), edges)
    for (const target of targets) if (group(target) !== group(node)) edges.add(group(target))
  }
  return result
}

/** The graph's cycles: its strongly connected components of more than one node (Tarjan), each sorted. */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlySet<string>>): Array<Array<string>> => {
  const index = new Map<string, number>()
  const lowLink = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const cycles: Array<Array<string>> = []
  const visit = (node: string) => {
    index.set(node, index.size)
    lowLink.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target)
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(target)!))
      } else if (onStack.has(target)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(target)!))
      }
    }
    if (lowLink.get(node) !== index.get(node)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1) cycles.push(component.toSorted())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return cycles
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
          const target = srcTargetOf(file, specifier)
          return target !== undefined && !kernel.includes(topFolderOf(target))
        })
        .map((specifier) => `${relative(src, file)} → ${specifier}`)
    )
    expect(offending).toEqual([])
  })
})

describe("imports", () => {
  it("finds the cycles of a graph, and only those", () => {
    const graph = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a", "d"])],
      ["d", new Set(["e"])],
      ["e", new Set<string>()],
      ["f", new Set(["f"])]
    ])
    expect(cyclesOf(graph)).toEqual([["a", "b", "c"]])
    expect(cyclesOf(grouped(graph, (node) => (node === "e" ? "e" : "rest")))).toEqual([])
    expect(cyclesOf(grouped(graph, (node) => (node === "a" || node === "d" ? "x" : "y")))).toEqual([["x", "y"]])
  })

  it("between files of src/ form no cycle", () => {
    expect(cyclesOf(importGraph())).toEqual([])
  })

  it("between the areas of src/ (an area with its subfolders) form no cycle", () => {
    expect(cyclesOf(grouped(importGraph(), areaOf))).toEqual([])
  })
})
