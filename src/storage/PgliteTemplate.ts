import { Effect } from "effect"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { fsStep } from "./DataDirLock.ts"
import { latestMigration, migrate } from "./Migrations.ts"
import * as Pglite from "./PgliteClient.ts"

/**
 * A pre-initialised embedded database: a data folder that `initdb` and the
 * migrations have already run on, made once at build time (`npm run build`,
 * and by `npm start` when it builds). A first start copies it instead of
 * running `initdb`, which peaks at over 1 GB and leaves the process holding
 * ~100 MB it never returns. Beside `dist/main.js` once built
 * (`dist/pglite-template/`), and found from `src/` as from `dist/`.
 */
export const templateDirectory = fileURLToPath(new URL("../../dist/pglite-template/", import.meta.url))

/** What a template was made with, in its folder: a template of another PGlite build is not used. */
const manifestFile = "platform-template.json"

/** The file whose presence makes a folder an initialised database, for PGlite as for PostgreSQL. */
const versionFile = "PG_VERSION"

interface Manifest {
  readonly pglite: string
  readonly migration: number
}

/** The installed PGlite's version: its data folders are only known to open with the same build. */
const installedPgliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const packageJson = join(dirname(entry), "..", "package.json")
  return String((JSON.parse(readFileSync(packageJson, "utf8")) as { version?: unknown }).version)
}

const readManifest = (template: string): Manifest | undefined => {
  try {
    return JSON.parse(readFileSync(join(template, manifestFile), "utf8")) as Manifest
  } catch {
    return undefined
  }
}

/** The template's manifest when it is complete and made by the installed PGlite, else undefined. */
const usableTemplate = (template: string): Manifest | undefined => {
  const manifest = readManifest(template)
  return manifest !== undefined && manifest.pglite === installedPgliteVersion() && existsSync(join(template, versionFile))
    ? manifest
    : undefined
}

/** True when `template` was made by the installed PGlite with every migration of this build. */
export const isTemplateCurrent = (template: string) => usableTemplate(template)?.migration === latestMigration()

/**
 * Makes the template in `directory`: PGlite initialises and migrates a folder
 * beside it (one per process, should two builds run at once), which replaces
 * `directory` only once complete, so an interrupted build leaves no
 * half-made template.
 */
export const makeTemplate = (directory: string) =>
  Effect.gen(function*() {
    const partial = `${directory.replace(/\/+$/, "")}.partial-${process.pid}`
    yield* fsStep(() => rmSync(partial, { recursive: true, force: true }))
    const migration = yield* Effect.scoped(Effect.provide(migrate, Pglite.layerFrom(Pglite.open(partial))))
    const manifest: Manifest = { pglite: installedPgliteVersion(), migration }
    yield* fsStep(() => {
      writeFileSync(join(partial, manifestFile), JSON.stringify(manifest))
      rmSync(directory, { recursive: true, force: true })
      renameSync(partial, directory)
    })
    return manifest
  })

/**
 * Fills an uninitialised data folder from the template; false (and nothing
 * done) when the folder holds a database already or there is no usable
 * template, so PGlite runs `initdb` as before. The copy goes to a folder
 * inside `dataDir` and its entries move in with `PG_VERSION` last: a start
 * killed midway leaves a folder without `PG_VERSION`, which the next start
 * clears of the template's entries and fills again.
 */
export const seedFromTemplate = (dataDir: string, template: string = templateDirectory) =>
  fsStep(() => {
    if (existsSync(join(dataDir, versionFile)) || usableTemplate(template) === undefined) return false
    const staging = join(dataDir, ".pglite-template.partial")
    rmSync(staging, { recursive: true, force: true })
    mkdirSync(dataDir, { recursive: true })
    cpSync(template, staging, { recursive: true, filter: (source) => !source.endsWith(`/${manifestFile}`) })
    const entries = readdirSync(staging).filter((entry) => entry !== versionFile)
    for (const entry of [...entries, versionFile]) {
      rmSync(join(dataDir, entry), { recursive: true, force: true })
      renameSync(join(staging, entry), join(dataDir, entry))
    }
    rmSync(staging, { recursive: true, force: true })
    return true
  })
