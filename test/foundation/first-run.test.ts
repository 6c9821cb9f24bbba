import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { type Bootstrapped, firstRun } from "../../src/accounts/admin/FirstRun.ts"
import { hashKey } from "../../src/accounts/keys/KeyFormat.ts"
import { KeysRepo } from "../../src/accounts/keys/KeysRepo.ts"
import { pgliteStorage, testConfig } from "../support/TestServer.ts"

const organizations = SqlClient.SqlClient.use((sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM organizations`)
  .pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

/** The keys a first start printed, as an operator would copy them from the terminal. */
const printed: Array<Bootstrapped> = []
const print = (created: Bootstrapped) => Effect.sync(() => void printed.push(created))

describe("the first start of an embedded database", () => {
  it.layer(pgliteStorage.pipe(Layer.provideMerge(testConfig())))((it) => {
    it.effect("keeps nothing when it is stopped before or while printing the keys, then starts over", () =>
      Effect.gen(function*() {
        // killed while printing: the output never completed
        const killed = yield* Effect.exit(firstRun(() => Effect.interrupt))
        expect(Exit.hasInterrupts(killed)).toBe(true)
        expect(yield* organizations).toBe(0)
        // a defect after the tenant was written but before the keys were out
        const crashed = yield* Effect.exit(firstRun(() => Effect.die(new Error("stdout closed"))))
        expect(Exit.isFailure(crashed)).toBe(true)
        expect(yield* organizations).toBe(0)

        yield* firstRun(print)
        expect(yield* organizations).toBe(1)
        expect(printed).toHaveLength(1)
        const keys = yield* KeysRepo
        const [shown] = printed
        expect(Option.isSome(yield* keys.findCompanyKeyByHash(hashKey(shown!.apiKey)))).toBe(true)
        expect(Option.isSome(yield* keys.findPersonalKeyByHash(hashKey(shown!.personalAccessKey)))).toBe(true)

        // a later start finds the organization and prints nothing
        yield* firstRun(print)
        expect(printed).toHaveLength(1)
        expect(yield* organizations).toBe(1)
      }))
  })
})
