import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { sharedOnPostgres } from "../storage/Database.ts"
import { toNumber } from "../storage/Rows.ts"

/**
 * A counter of access changes (key deleted or revoked, company user changed
 * or removed). Cached principals are valid only at the revision they were
 * resolved at, so a change is seen by every process on its very next
 * request. With PostgreSQL the counter is a row shared by all processes
 * (read in the rate limiter's round trip); the embedded database and the
 * memory backend serve one process, so a counter in memory is enough.
 */
export class AccessRevision extends Context.Service<AccessRevision, {
  readonly current: Effect.Effect<number>
  readonly bump: Effect.Effect<void>
}>()("auth/AccessRevision") {
  static readonly local = Layer.sync(AccessRevision, () => {
    let revision = 0
    return {
      current: Effect.sync(() => revision),
      bump: Effect.sync(() => void revision++)
    }
  })

  static readonly sql = Layer.effect(AccessRevision, SqlClient.SqlClient.useSync((sql) => ({
    current: sql<{ readonly revision: unknown }>`SELECT revision FROM access_revision WHERE id = 1`.pipe(
      Effect.map((rows) => toNumber(rows[0].revision)),
      Effect.orDie
    ),
    bump: sql`UPDATE access_revision SET revision = revision + 1 WHERE id = 1`.pipe(Effect.asVoid, Effect.orDie)
  })))

  static readonly layer = sharedOnPostgres(AccessRevision.sql, AccessRevision.local)
}
