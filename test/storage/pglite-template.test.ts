import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { latestMigration, migrate } from "../../src/storage/Migrations.ts"
import * as Pglite from "../../src/storage/PgliteClient.ts"
import { makeTemplate, seedFromTemplate } from "../../src/storage/PgliteTemplate.ts"

const root = mkdtempSync(join(tmpdir(), "platform-template-"))
/** Made once, as `npm run build` makes it: PGlite's own initdb on an empty folder, then the migrations. */
const template = join(root, "template")
let folders = 0
const emptyFolder = () => join(root, `data-${++folders}`)

beforeAll(() => Effect.runPromise(makeTemplate(template)), 120_000)
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Opens the folder as a start does (after seeding) and runs `use` on its migrated database. */
const started = <A, E>(dataDir: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.gen(function*() {
    const version = yield* migrate
    const result = yield* use(yield* SqlClient.SqlClient)
    return { version, result }
  }).pipe(Effect.provide(Pglite.layerFrom(Pglite.open(dataDir)))))

const organizations = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM organizations`, (rows) => rows[0]!.count)

describe("pre-initialised embedded database", () => {
  it.effect("a first start copies the template and answers on a database at the newest migration", () =>
    Effect.gen(function*() {
      const dataDir = emptyFolder()
      expect(yield* seedFromTemplate(dataDir, template)).toBe(true)
      expect(readdirSync(dataDir)).not.toContain(".pglite-template.partial")
      expect(readdirSync(dataDir)).not.toContain("platform-template.json")
      const first = yield* started(dataDir, organizations)
      expect(first).toEqual({ version: latestMigration(), result: 0 })
    }), 60_000)

  it.effect("a folder holding a database is never seeded again, and keeps what was written", () =>
    Effect.gen(function*() {
      const dataDir = emptyFolder()
      yield* seedFromTemplate(dataDir, template)
      yield* started(dataDir, (sql) => sql`INSERT INTO organizations (id, name) VALUES ('org_kept', 'Kept')`)
      expect(yield* seedFromTemplate(dataDir, template)).toBe(false)
      const again = yield* started(dataDir, (sql) => sql<{ readonly name: string }>`SELECT name FROM organizations`)
      expect(again.result).toEqual([{ name: "Kept" }])
    }), 60_000)

  it.effect("a folder initialised by PGlite's own initdb, as before the template existed, opens unchanged", () =>
    Effect.gen(function*() {
      // The template is such a folder: made by initdb on an empty folder, never seeded.
      const dataDir = emptyFolder()
      cpSync(template, dataDir, { recursive: true })
      expect(yield* seedFromTemplate(dataDir, join(root, "no-template"))).toBe(false)
      const opened = yield* started(dataDir, organizations)
      expect(opened).toEqual({ version: latestMigration(), result: 0 })
    }), 60_000)

  it.effect("a copy interrupted before PG_VERSION moved in is cleared and made again", () =>
    Effect.gen(function*() {
      const dataDir = emptyFolder()
      mkdirSync(join(dataDir, ".pglite-template.partial", "base"), { recursive: true })
      mkdirSync(join(dataDir, "base", "1"), { recursive: true })
      writeFileSync(join(dataDir, "base", "1", "truncated"), "half a file")
      writeFileSync(join(dataDir, "postgresql.conf"), "shared_buffers = 'garbled")
      expect(yield* seedFromTemplate(dataDir, template)).toBe(true)
      expect(existsSync(join(dataDir, "base", "1", "truncated"))).toBe(false)
      const opened = yield* started(dataDir, organizations)
      expect(opened).toEqual({ version: latestMigration(), result: 0 })
    }), 60_000)

  it.effect("a missing template, or one another PGlite made, is not used: the folder is left for initdb", () =>
    Effect.gen(function*() {
      const foreign = join(root, "foreign-template")
      cpSync(template, foreign, { recursive: true })
      writeFileSync(join(foreign, "platform-template.json"), JSON.stringify({ pglite: "0.0.1", migration: latestMigration() }))
      for (const unusable of [foreign, join(root, "no-template")]) {
        const dataDir = emptyFolder()
        mkdirSync(dataDir)
        expect(yield* seedFromTemplate(dataDir, unusable)).toBe(false)
        expect(readdirSync(dataDir)).toEqual([])
      }
    }))
})
