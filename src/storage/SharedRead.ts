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
 */
export const sharedRead = <A>(read: Effect.Effect<A>, runDetached: (effect: Effect.Effect<void>) => unknown): Effect.Effect<A> => {
  let next: Deferred.Deferred<A> | undefined
  let reading = false
  const sendNext = (batch: Deferred.Deferred<A>) => {
    next = undefined
    reading = true
    runDetached(Effect.map(Effect.exit(read), (exit) => {
      reading = false
      Deferred.doneUnsafe(batch, exit)
      if (next !== undefined) sendNext(next)
    }))
  }
  return Effect.suspend(() => {
    const batch = next ?? (next = Deferred.makeUnsafe<A>())
    if (!reading) sendNext(batch)
    return Deferred.await(batch)
  })
}
