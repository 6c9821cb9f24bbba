import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { migrate } from "../../src/storage/Migrations.ts"
import * as Pglite from "../../src/storage/PgliteClient.ts"

/**
 * Vitest global setup: boots PGlite and migrates it once per run, and saves
 * the data folder as a tarball that every test file's PGlite starts from
 * (`pgliteStorage` in TestServer.ts). Booting an empty PGlite costs seconds;
 * loading a migrated one a fraction of that.
 */
declare module "vitest" {
  export interface ProvidedContext {
    readonly pgliteTemplate: string
  }
}

const migratedDataDir = Effect.gen(function*() {
  yield* migrate
  const db = yield* Pglite.Pglite
  return yield* Effect.promise(() => db.dumpDataDir())
}).pipe(Effect.provide(Pglite.layerFrom(Pglite.open(undefined))))

export default async function setup(project: TestProject) {
  const folder = mkdtempSync(join(tmpdir(), "platform-api-pglite-"))
  const path = join(folder, "migrated.tar.gz")
  const dump = await Effect.runPromise(migratedDataDir)
  writeFileSync(path, Buffer.from(dump))
  project.provide("pgliteTemplate", path)
  return () => rmSync(folder, { recursive: true, force: true })
}
