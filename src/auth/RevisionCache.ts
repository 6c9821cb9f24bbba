import { Context, Effect, Layer } from "effect"

/**
 * The access revision (`AccessRevision`) the current request was
 * authenticated at, read before anything the handler reads: provided by the
 * authentication middleware, so that a cache costs no round trip of its own.
 */
export class RequestRevision extends Context.Service<RequestRevision, { readonly revision: number }>()(
  "auth/RequestRevision"
) {}

/**
 * A per-process cache of a hot read, trusted only at the access revision it
 * was read at, as cached principals are: every write that changes what such a
 * read returns goes through `AccessRevision.changing`, so the next request in
 * any process reads anew. Entries also expire after `revisionCacheTtlMs`
 * (changes made outside the service, e.g. by hand in the database), and at
 * most `capacity` are kept: the least recently used goes first.
 */
export interface RevisionCache<A> {
  /**
   * The value for `key`: from the cache when it was read at this request's
   * revision, else from `read`, which is only called then (making the read's
   * effect can cost as much as a cache hit: `Effect.fn` takes a stack trace).
   */
  readonly through: <E, R>(key: string, read: () => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | RequestRevision>
  /** `through` at `revision`, for a read outside an authenticated request (e.g. a public page). */
  readonly at: <E, R>(revision: number, key: string, read: () => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

interface Entry<A> {
  readonly value: A
  readonly revision: number
  readonly validUntil: number
  readonly weight: number
}

/** A bound on what a cache holds beyond its count of entries, e.g. bytes: a value weighing more is not kept. */
export interface CacheBudget<A> {
  readonly weightOf: (value: A) => number
  readonly max: number
}

/** How long a cached read is kept at most, as a cached principal. */
export const revisionCacheTtlMs = 60_000

export const makeRevisionCache = <A>(capacity: number, budget?: CacheBudget<A>): RevisionCache<A> => {
  const entries = new Map<string, Entry<A>>()
  let weight = 0
  const drop = (key: string) => {
    weight -= entries.get(key)?.weight ?? 0
    entries.delete(key)
  }
  const remember = (key: string, value: A, revision: number) => {
    const present = entries.get(key)
    // A slower read of an older revision must not replace a newer one.
    if (present !== undefined && present.revision > revision) return
    drop(key)
    const valueWeight = budget?.weightOf(value) ?? 0
    if (budget !== undefined && valueWeight > budget.max) return
    while (entries.size > 0 && (entries.size >= capacity || (budget !== undefined && weight + valueWeight > budget.max))) {
      drop(entries.keys().next().value!)
    }
    weight += valueWeight
    entries.set(key, { value, revision, validUntil: Date.now() + revisionCacheTtlMs, weight: valueWeight })
  }
  const at = <E, R>(revision: number, key: string, read: () => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const entry = entries.get(key)
    if (entry !== undefined && entry.revision === revision && entry.validUntil > Date.now()) {
      // Moved to the end: the first key is the least recently used.
      entries.delete(key)
      entries.set(key, entry)
      return Effect.succeed(entry.value)
    }
    return Effect.tap(read(), (value) => Effect.sync(() => remember(key, value, revision)))
  }
  return {
    through: (key, read) => Effect.flatMap(RequestRevision, ({ revision }) => at(revision, key, read)),
    at
  }
}

/** A layer giving `service` a cache of its own per server instance, of at most `capacity` entries. */
export const revisionCacheLayer = <I, A>(service: Context.Key<I, RevisionCache<A>>, capacity: number) =>
  Layer.sync(service, () => makeRevisionCache<A>(capacity))
