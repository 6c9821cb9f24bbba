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

/**
 * How old the revision `recent` answers may be, when this process changed
 * nothing since it was read: up to `recentRevisionMillis` it is trusted as
 * read; then a new read is sent while the last one still answers, up to
 * `staleRevisionMillis`, after which a request waits for the new read.
 */
export const recentRevisionMillis = 100
export const staleRevisionMillis = 1_000

export class AccessRevision extends Context.Service<AccessRevision, {
  readonly current: Effect.Effect<number>
  /**
   * The revision as read about `recentRevisionMillis` ago (never more than
   * `staleRevisionMillis`), and after this process's last change: for caches
   * of public content that may show another process's change a moment late
   * (landing pages, themselves cacheable for a minute), without a round trip
   * per request. The same as `current` on the embedded database.
   */
  readonly recent: Effect.Effect<number>
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
    const current = Effect.sync(() => revision)
    return {
      current,
      recent: current,
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
    // Every request reads the revision: concurrent ones share a read sent after they asked.
    const current = sharedRead(read, runDetached)
    /** This process's changes so far: a read asked for before the last one does not count as recent. */
    let changes = 0
    let last: { readonly revision: number; readonly askedAt: number; readonly changes: number } | undefined
    let refreshing = false
    const readRecent = (asked: { readonly askedAt: number; readonly changes: number }) =>
      Effect.tap(current, (revision) =>
        Effect.sync(() => {
          if (last === undefined || asked.askedAt >= last.askedAt) last = { revision, ...asked }
        }))

    return {
      current,
      recent: Effect.suspend(() => {
        const now = Date.now()
        const age = last !== undefined && last.changes === changes ? now - last.askedAt : Infinity
        if (age < recentRevisionMillis) return Effect.succeed(last!.revision)
        const read = readRecent({ askedAt: now, changes })
        if (age >= staleRevisionMillis) return read
        if (!refreshing) {
          refreshing = true
          runDetached(Effect.ensuring(read, Effect.sync(() => void (refreshing = false))))
        }
        return Effect.succeed(last!.revision)
      }),
      bump,
      changing: (write) =>
        sql.withTransaction(Effect.tap(write, () => bump)).pipe(
          Effect.catchIf(SqlError.isSqlError, Effect.die),
          Effect.ensuring(Effect.sync(() => void changes++))
        )
    }
  }))

  static readonly layer = sharedOnPostgres(AccessRevision.sql, AccessRevision.local)
}

/** `write`, then a bumped access revision (see `AccessRevision.changing`). */
export const changing = <A, E, R>(write: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | AccessRevision> =>
  AccessRevision.use((revisions) => revisions.changing(write))
