// Building `dist/` when it is stale: shared by `npm start` and the benchmarks.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))
export const builtMain = join(root, "dist", "main.js")

const newestChange = (path: string): number => {
  const stat = statSync(path)
  return stat.isDirectory()
    ? Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))))
    : stat.mtimeMs
}

/** Runs `npm run build`'s compiler when `dist/main.js` is missing or older than a source or tsconfig. */
export const ensureBuilt = () => {
  const sources = Math.max(
    newestChange(join(root, "src")),
    ...["tsconfig.json", "tsconfig.build.json"].map((file) => newestChange(join(root, file)))
  )
  if (existsSync(builtMain) && statSync(builtMain).mtimeMs >= sources) return
  process.stderr.write("building dist/ (tsc -p tsconfig.build.json)\n")
  const build = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    encoding: "utf8"
  })
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`)
}
