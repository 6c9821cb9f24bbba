import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Admin from "./Admin.ts"

export type Bootstrapped = Effect.Success<ReturnType<typeof Admin.bootstrap>>

/**
 * The first start of an embedded database (no organization in it yet)
 * creates a default organization, company and owner, and commits them in one
 * transaction only after `show` printed their keys: a start killed at any
 * moment before leaves nothing behind, and the next start begins again, so
 * there is never a default tenant whose keys nobody saw.
 */
export const firstRun = <E, R>(show: (created: Bootstrapped) => Effect.Effect<void, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ readonly present: boolean }>`SELECT EXISTS (SELECT 1 FROM organizations) AS present`
      if (rows[0]?.present === true) return
      const created = yield* Effect.orDie(
        Admin.bootstrap({ organization: "Default organization", company: "Default company", email: "owner@localhost" })
      )
      yield* show(created)
    }))
  })
