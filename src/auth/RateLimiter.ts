import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../platform/AppConfig.ts"
import { oneAtATime } from "../platform/OneAtATime.ts"
import { toNumber } from "../storage/Rows.ts"
import { sharedOnPostgres } from "../storage/Database.ts"
import { AccessRevision } from "./AccessRevision.ts"

/** The outcome of taking one token from a credential's bucket. */
export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until a token is available again (0 when one is). */
  readonly retryAfterSeconds: number
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number
}

/** A rate decision and the access revision read in the same round trip (see `AccessRevision`). */
export interface Taken {
  readonly decision: RateDecision
  readonly revision: number
}

/**
 * Token buckets: per credential `RATE_LIMIT_PER_MINUTE` tokens, refilled
 * continuously; other buckets (a landing page's submissions per address)
 * name their own capacity per minute. In memory for a single process; in
 * PostgreSQL, taken in blocks, when several processes share the database.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Takes a token from `bucket`, which holds `perMinute` (default `RATE_LIMIT_PER_MINUTE`) tokens. */
  readonly take: (bucket: string, perMinute?: number) => Effect.Effect<Taken>
}>()("auth/RateLimiter") {
  static readonly local = Layer.effect(RateLimiter, Effect.gen(function*() {
    const { rateLimitPerMinute } = yield* AppConfig
    const revisions = yield* AccessRevision
    const buckets = new Map<string, { tokens: number; at: number }>()
    return {
      take: (bucket, capacity = rateLimitPerMinute) =>
        Effect.zipWith(Effect.sync(() => {
          const perMs = capacity / 60_000
          const now = Date.now()
          const previous = buckets.get(bucket)
          const refilled = previous === undefined ? capacity : Math.min(capacity, previous.tokens + (now - previous.at) * perMs)
          const allowed = refilled >= 1
          const tokens = allowed ? refilled - 1 : refilled
          buckets.set(bucket, { tokens, at: now })
          return decide(allowed, tokens, capacity)
        }), revisions.current, (decision, revision) => ({ decision, revision }))
    }
  }))

  /**
   * Several processes on one PostgreSQL share each credential's bucket. A
   * process takes tokens from it in blocks — 1% of the capacity, at least one
   * — with one atomic upsert, and spends them in memory for at most a second
   * (unspent ones are dropped: a process never holds a burst of old tokens).
   * The bucket therefore never hands out more than its capacity; a process
   * may refuse while another holds unspent tokens, by at most one block each.
   * A request served from a block still reads the access revision (a read,
   * not a write), so that revocations stay instant.
   */
  static readonly sql = Layer.effect(RateLimiter, Effect.gen(function*() {
    const { rateLimitPerMinute } = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const revisions = yield* AccessRevision
    const blockLifetimeMs = 1_000
    const blocks = new Map<string, { tokens: number; until: number; sharedRemaining: number }>()
    const takeBlock = (bucket: string, capacity: number) => {
      const perSecond = capacity / 60
      const block = Math.max(1, Math.floor(capacity / 100))
      const refilled = sql`least(${capacity}::float8,
        b.tokens + extract(epoch FROM clock_timestamp() - b.updated_at) * ${perSecond}::float8)`
      const handedOut = sql`CASE WHEN ${refilled} >= 1 THEN least(${block}::float8, floor(${refilled})) ELSE 0 END`
      return sql<{ readonly tokens: number; readonly allowed: boolean; readonly taken: number; readonly revision: unknown }>`
        INSERT INTO rate_limit_buckets AS b (bucket, tokens, allowed, taken, updated_at)
        VALUES (${bucket}, ${capacity - Math.min(block, capacity)}, true, ${Math.min(block, capacity)}, clock_timestamp())
        ON CONFLICT (bucket) DO UPDATE SET
          allowed = ${refilled} >= 1,
          taken = ${handedOut},
          tokens = ${refilled} - ${handedOut},
          updated_at = clock_timestamp()
        RETURNING tokens, allowed, taken, (SELECT revision FROM access_revision WHERE id = 1) AS revision`.pipe(
        Effect.map((rows): Taken => {
          const { tokens, allowed, taken } = rows[0]
          const sharedRemaining = Number(tokens)
          const spare = Number(taken) - 1
          if (allowed && spare > 0) blocks.set(bucket, { tokens: spare, until: Date.now() + blockLifetimeMs, sharedRemaining })
          return {
            decision: decide(allowed, sharedRemaining + Math.max(spare, 0), capacity),
            revision: toNumber(rows[0].revision)
          }
        }),
        Effect.orDie
      )
    }
    /** One block take per bucket at a time: requests arriving meanwhile wait for it instead of taking blocks of their own. */
    const takingFor = oneAtATime()
    const take = (bucket: string, capacity = rateLimitPerMinute): Effect.Effect<Taken> =>
      takingFor(bucket, () => {
        const held = blocks.get(bucket)
        if (held === undefined || held.until <= Date.now()) return undefined
        held.tokens -= 1
        if (held.tokens < 1) blocks.delete(bucket)
        const remaining = held.sharedRemaining + held.tokens
        return Effect.map(revisions.current, (revision): Taken => ({ decision: decide(true, remaining, capacity), revision }))
      }, () => takeBlock(bucket, capacity))
    return { take }
  }))

  static readonly layer = sharedOnPostgres(RateLimiter.sql, RateLimiter.local)
}

const decide = (allowed: boolean, tokens: number, capacity: number): RateDecision => {
  const perSecond = capacity / 60
  return {
    allowed,
    limit: capacity,
    remaining: Math.floor(tokens),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
    resetSeconds: Math.ceil((capacity - tokens) / perSecond)
  }
}
