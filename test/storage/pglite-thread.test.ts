import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as Pglite from "../../src/storage/PgliteClient.ts"

/** PGlite runs on a thread of its own; a statement must never wait for a thread that is gone. */
describe("PGlite's thread", () => {
  it.effect("once the database's thread has exited, a statement fails at once instead of waiting for an answer", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const session = yield* Scope.provide(Pglite.open(undefined), scope)
      const before = yield* Effect.promise(() => session.query<{ readonly one: number }>("SELECT 1 AS one", [], "object"))
      expect(before.rows).toEqual([{ one: 1 }])
      yield* Scope.close(scope, Exit.void)
      const after = yield* Effect.flip(Effect.tryPromise(() => session.query("SELECT 1 AS one", [], "object")))
      expect(String(after.cause)).toContain("The embedded database stopped")
    }), { timeout: 30_000 })
})
