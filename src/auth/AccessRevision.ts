import { Context, Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { sharedOnPostgres } from "../storage/Database.ts"
import { toNumber } from "../storage/Rows.ts"
import { sharedRead } from "../storage/SharedRead.ts"

/**
 * A counter of access changes (key deleted or revoked, company user added,
 * changed or removed, organization ownership or membership changed). Cached
 * principals and cached reads (`RevisionCache`) are valid only at the
 * revision they were resolved at, so a change is seen by every process on its
 * very next request. With PostgreSQL the counter is a row shared by all
 * processes (read in the rate limiter's round trip); the embedded database
 * serves one process, so a counter in memory is enough.
 */
export class AccessRevision extends Context.Service<AccessRevision, {
  readonly current: Effect.Effect<number>
  readonly bump: Effect.Effect<void>
  /**
   * Runs `write` and bumps the revision; with PostgreSQL in one transaction,
   * so that no process can read the write and still trust what it cached
   * before, and a crash cannot leave the write without its bump.
   */
  readonly changing: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("auth/AccessRevision") {
  static readonly local = Layer.sync(AccessRevision, () => {
    let revision = 0
    const bump = Effect.sync(() => void revision++)
    return {
      current: Effect.sync(() => revision),
      bump,
      changing: (write) => Effect.tap(write, () => bump)
    }
  })

  static readonly sql = Layer.effect(AccessRevision, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Reads run outside the asking request's fiber, so never on a connection of a transaction it is in.
    const runDetached = Effect.runForkWith(yield* Effect.context<SqlClient.SqlClient>())
    const read = sql<{ readonly revision: unknown }>`SELECT revision FROM access_revision WHERE id = 1`.pipe(
      Effect.map((rows) => toNumber(rows[0].revision)),
      Effect.orDie
    )
    const bump = sql`UPDATE access_revision SET revision = revision + 1 WHERE id = 1`.pipe(Effect.asVoid, Effect.orDie)

    return {
      // Every request reads the revision: concurrent ones share a read sent after they asked.
      current: sharedRead(read, runDetached),
      bump,
      changing: (write) =>
        sql.withTransaction(Effect.tap(write, () => bump)).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die))
    }
  }))

  static readonly layer = sharedOnPostgres(AccessRevision.sql, AccessRevision.local)
}

/** `write`, then a bumped access revision (see `AccessRevision.changing`). */
export const changing = <A, E, R>(write: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | AccessRevision> =>
  AccessRevision.use((revisions) => revisions.changing(write))
