// Other git revisions of this project, built beside this checkout, so that a
// benchmark measures them and the working tree in one run on one machine:
// the revision's files (`git archive`) in a folder of the system's temporary
// directory, its own `npm ci` (with its install scripts, e.g. patches of
// node_modules; a revision with this checkout's lockfile and no install script
// of its own shares this checkout's node_modules through hard links) and build. The folder is kept for the next run (it is named
// by the commit) and can be deleted at any time.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { root, startOptionsOf } from "../build.ts"

/** A built checkout: where its `dist/main.js` is and the Node options its `npm start` passes. */
export interface Checkout {
  readonly label: string
  readonly root: string
  readonly main: string
  readonly nodeOptions: ReadonlyArray<string>
}

const installScriptsOf = (folder: string): ReadonlyArray<string> => {
  const scripts: Record<string, string> = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).scripts ?? {}
  return ["preinstall", "install", "postinstall", "prepare"].filter((name) => scripts[name] !== undefined)
}

/** The working tree, as `npm start` runs it. */
export const workingTree: Checkout = {
  label: "working tree",
  root,
  main: join(root, "dist", "main.js"),
  nodeOptions: startOptionsOf(root)
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string) => {
  process.stderr.write(`${cwd}: ${command} ${args.join(" ")}\n`)
  execFileSync(command, args, { cwd, stdio: ["ignore", "ignore", "inherit"] })
}

/** The revision (anything `git rev-parse` reads: a branch, a tag, `main~2`), installed and built. */
export const checkoutOf = (revision: string): Checkout => {
  const commit = execFileSync("git", ["rev-parse", "--verify", `${revision}^{commit}`], { cwd: root, encoding: "utf8" }).trim()
  const folder = join(tmpdir(), `platform-api-${commit.slice(0, 12)}`)
  const ready = join(folder, ".built")
  if (!existsSync(ready)) {
    rmSync(folder, { recursive: true, force: true })
    mkdirSync(folder, { recursive: true })
    execFileSync("sh", ["-c", `git archive ${commit} | tar -x -C "${folder}"`], { cwd: root })
    const sameInstall = readFileSync(join(folder, "package-lock.json"), "utf8") === readFileSync(join(root, "package-lock.json"), "utf8") &&
      installScriptsOf(folder).length === 0 && installScriptsOf(root).length === 0
    if (sameInstall) run("cp", ["-al", join(root, "node_modules"), join(folder, "node_modules")], folder)
    else run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], folder)
    run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], folder)
    run(process.execPath, ["scripts/pglite-template.ts"], folder)
    writeFileSync(ready, `${commit}\n`)
  }
  return { label: `${revision} (${commit.slice(0, 7)})`, root: folder, main: join(folder, "dist", "main.js"), nodeOptions: startOptionsOf(folder) }
}
