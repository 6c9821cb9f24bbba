import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../platform/AppConfig.ts"
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

/**
 * Per-credential token bucket: `RATE_LIMIT_PER_MINUTE` tokens, refilled
 * continuously. In memory for a single process; in PostgreSQL (one atomic
 * upsert per request) when several processes share the database.
 */
/** A rate decision and the access revision read in the same round trip (see `AccessRevision`). */
export interface Taken {
  readonly decision: RateDecision
  readonly revision: number
}

export class RateLimiter extends Context.Service<RateLimiter, {
  readonly take: (bucket: string) => Effect.Effect<Taken>
}>()("auth/RateLimiter") {
  static readonly memory = Layer.effect(RateLimiter, Effect.gen(function*() {
    const { rateLimitPerMinute: capacity } = yield* AppConfig
    const revisions = yield* AccessRevision
    const perMs = capacity / 60_000
    const buckets = new Map<string, { tokens: number; at: number }>()
    return {
      take: (bucket) =>
        Effect.zipWith(Effect.sync(() => {
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

  static readonly sql = Layer.effect(RateLimiter, Effect.gen(function*() {
    const { rateLimitPerMinute: capacity } = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const perSecond = capacity / 60
    const refilled = sql`least(${capacity}::float8,
      b.tokens + extract(epoch FROM clock_timestamp() - b.updated_at) * ${perSecond}::float8)`
    return {
      take: (bucket) =>
        sql<{ readonly tokens: number; readonly allowed: boolean; readonly revision: unknown }>`
          INSERT INTO rate_limit_buckets AS b (bucket, tokens, allowed, updated_at)
          VALUES (${bucket}, ${capacity - 1}, true, clock_timestamp())
          ON CONFLICT (bucket) DO UPDATE SET
            allowed = ${refilled} >= 1,
            tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
            updated_at = clock_timestamp()
          RETURNING tokens, allowed, (SELECT revision FROM access_revision WHERE id = 1) AS revision`.pipe(
          Effect.map((rows) => ({
            decision: decide(rows[0].allowed, Number(rows[0].tokens), capacity),
            revision: toNumber(rows[0].revision)
          })),
          Effect.orDie
        )
    }
  }))

  static readonly layer = sharedOnPostgres(RateLimiter.sql, RateLimiter.memory)
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
