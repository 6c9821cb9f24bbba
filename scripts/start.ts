import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

/**
 * `npm start`: runs the built server (`dist/main.js`), building it first
 * only when a source file is newer than the build.
 */
const root = join(import.meta.dirname, "..")
const built = join(root, "dist", "main.js")

const newestSource = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name)
    return Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }, 0)

if (!existsSync(built) || statSync(built).mtimeMs < newestSource(join(root, "src"))) {
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-p", join(root, "tsconfig.build.json")], { stdio: "inherit" })
}

await import(pathToFileURL(built).href)
