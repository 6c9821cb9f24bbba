import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { latestMigration } from "../../src/storage/Migrations.ts"
import { backends, client, testServer } from "../support/TestServer.ts"

describe.each(backends)("GET /health on $name", ({ name, storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("reports the storage backend and the migration version, without credentials", () =>
      Effect.gen(function*() {
        const api = yield* client()
        const health = yield* api.health.check()
        expect(health).toEqual({ status: "ok", storage: name, migrationVersion: latestMigration() })
        expect(latestMigration()).toBeGreaterThan(0)
      }))
  })
})
