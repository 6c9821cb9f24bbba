// Building `dist/` (and the pre-initialised embedded database in it) when it
// is stale: shared by `npm start` and the benchmarks. Run as a script with
// step names (`compiler`, `template`), it runs those steps side by side.
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { isTemplateCurrent, templateDirectory } from "../src/storage/PgliteTemplate.ts"

export const root = fileURLToPath(new URL("..", import.meta.url))
export const builtMain = join(root, "dist", "main.js")
const builtConsole = join(root, "dist", "console", "index.html")

/** Whether `built` is missing or older than the newest of `sources`. */
const isStale = (built: string, sources: number) => !existsSync(built) || statSync(built).mtimeMs < sources

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

/** The build's steps, each a Node command run in its own process. */
const steps = {
  compiler: {
    what: "the server (tsc, emit only → dist/)",
    args: [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"]
  },
  // In its own process, so that its initdb's memory is not left in the caller.
  template: { what: "its embedded database (dist/pglite-template/)", args: [join(root, "scripts/pglite-template.ts")] },
  console: {
    what: "the web console (vite → dist/console/)",
    args: [join(root, "node_modules/vite/bin/vite.js"), "build", "--config", join(root, "src/console/vite.config.ts")]
  }
}

type Step = keyof typeof steps

/** Runs the steps side by side (two cores build in the time of the longer one); any failure fails with its output. */
const runSteps = async (names: ReadonlyArray<Step>) => {
  // The template goes into dist/, which the compiler may not have made yet.
  mkdirSync(dirname(builtMain), { recursive: true })
  const failures = await Promise.all(names.map((name) =>
    new Promise<string | undefined>((resolve) => {
      const child = spawn(process.execPath, steps[name].args, { cwd: root })
      let output = ""
      child.stdout.on("data", (chunk) => (output += chunk))
      child.stderr.on("data", (chunk) => (output += chunk))
      child.on("close", (code) => resolve(code === 0 ? undefined : `building ${steps[name].what} failed:\n${output}`))
    })
  ))
  const failed = failures.filter((failure) => failure !== undefined)
  if (failed.length > 0) {
    process.stderr.write(failed.join("\n"))
    process.exitCode = 1
  }
}

/**
 * What `npm run build` does, each step only when stale: the compiler when
 * `dist/main.js` is missing or older than a source or tsconfig; the template
 * when missing, made by another PGlite or without the newest migration; the
 * console when `dist/console/` is missing or older than `src/console/`.
 */
export const ensureBuilt = () => {
  const sources = Math.max(
    newestChange(join(root, "src")),
    ...["tsconfig.json", "tsconfig.build.json"].map((file) => newestChange(join(root, file)))
  )
  const stale: Array<Step> = [
    ...(isStale(builtMain, sources) ? ["compiler" as const] : []),
    ...(isTemplateCurrent(templateDirectory) ? [] : ["template" as const]),
    ...(consoleStale() ? ["console" as const] : [])
  ]
  buildNow(stale)
}

const consoleStale = () => isStale(builtConsole, newestChange(join(root, "src", "console")))

/** Builds the console only, when stale: what the browser tests serve. */
export const ensureConsoleBuilt = () => buildNow(consoleStale() ? ["console"] : [])

/** Runs the steps in a child process (this one waits), saying once what it builds. */
const buildNow = (stale: ReadonlyArray<Step>) => {
  if (stale.length === 0) return
  process.stderr.write(
    `platform-api: building ${stale.map((name) => steps[name].what).join(" and ")}; once, and again only after a change\n`
  )
  const build = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...stale], { cwd: root, encoding: "utf8" })
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`)
}

if (import.meta.main) await runSteps(process.argv.slice(2).filter((name): name is Step => name in steps))
