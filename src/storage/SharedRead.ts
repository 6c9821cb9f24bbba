import { Deferred, Effect } from "effect"

/**
 * `read` shared by concurrent callers, each still getting a result read
 * after it asked: a read already under way may predate a change the caller
 * must see, so a caller asking then waits for the next read, sent as soon as
 * the one under way has answered, together with everyone else who asked
 * meanwhile. Under load that is one round trip for many callers instead of
 * one each; a caller alone waits for its own read. Reads run through
 * `runDetached` (outside the callers' fibers), so no caller's interruption
 * or context (e.g. a transaction's connection) reaches the others.
 *
 * Each caller names the keys it needs; a read is given the keys of every
 * caller it serves, and each of them gets its whole result.
 */
export const sharedReads = <K, A>(
  read: (keys: ReadonlySet<K>) => Effect.Effect<A>,
  runDetached: (effect: Effect.Effect<void>) => unknown
): (keys: Iterable<K>) => Effect.Effect<A> => {
  let next: { readonly result: Deferred.Deferred<A>; readonly keys: Set<K> } | undefined
  let reading = false
  const sendNext = (batch: NonNullable<typeof next>) => {
    next = undefined
    reading = true
    runDetached(Effect.map(Effect.exit(read(batch.keys)), (exit) => {
      reading = false
      Deferred.doneUnsafe(batch.result, exit)
      if (next !== undefined) sendNext(next)
    }))
  }
  return (keys) =>
    Effect.suspend(() => {
      const batch = next ?? (next = { result: Deferred.makeUnsafe<A>(), keys: new Set() })
      for (const key of keys) batch.keys.add(key)
      if (!reading) sendNext(batch)
      return Deferred.await(batch.result)
    })
}

/** `sharedReads` of a read that needs no keys. */
export const sharedRead = <A>(read: Effect.Effect<A>, runDetached: (effect: Effect.Effect<void>) => unknown): Effect.Effect<A> =>
  sharedReads(() => read, runDetached)([])
