// Building `dist/` (and the pre-initialised embedded database in it) when it
// is stale: shared by `npm start` and the benchmarks.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isTemplateCurrent, templateDirectory } from "../src/storage/PgliteTemplate.ts"

export const root = fileURLToPath(new URL("..", import.meta.url))
export const builtMain = join(root, "dist", "main.js")

/**
 * The options `npm start` of the checkout at `folder` gives `node` (the words
 * between `node` and the script): the V8 flags the server runs with
 * (docs/operations.md, "Performance settings"). Benchmarks start the built
 * server with them.
 */
export const startOptionsOf = (folder: string): ReadonlyArray<string> => {
  const start: string = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).scripts?.start ?? ""
  const words = start.split(/\s+/).filter((word) => word !== "" && word !== "exec")
  const node = words.indexOf("node")
  return node < 0 ? [] : words.slice(node + 1).filter((word) => word.startsWith("-"))
}

const newestChange = (path: string): number => {
  const stat = statSync(path)
  return stat.isDirectory()
    ? Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))))
    : stat.mtimeMs
}

const run = (what: string, args: ReadonlyArray<string>) => {
  process.stderr.write(`building ${what}\n`)
  const build = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" })
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`)
}

/**
 * What `npm run build` does, each step only when stale: the compiler when
 * `dist/main.js` is missing or older than a source or tsconfig; the template
 * when missing, made by another PGlite or without the newest migration (in
 * its own process, so that its initdb's memory is not left in this one).
 */
export const ensureBuilt = () => {
  const sources = Math.max(
    newestChange(join(root, "src")),
    ...["tsconfig.json", "tsconfig.build.json"].map((file) => newestChange(join(root, file)))
  )
  if (!existsSync(builtMain) || statSync(builtMain).mtimeMs < sources) {
    run("dist/ (tsc -p tsconfig.build.json)", [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"])
  }
  if (!isTemplateCurrent(templateDirectory)) {
    run("dist/pglite-template/ (node scripts/pglite-template.ts)", [join(root, "scripts/pglite-template.ts")])
  }
}
