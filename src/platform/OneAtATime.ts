import { Deferred, Effect } from "effect"

/**
 * One slow path per key at a time, without keeping a lock per key: `through(key, ready, slow)`
 * answers `ready()` when it has an answer, else runs `slow` — unless a `slow` for the same key is
 * under way, in which case it waits for that one to end and asks `ready()` again (what the other run
 * fetched may serve it). Keys are forgotten as their runs end.
 */
export const oneAtATime = () => {
  const running = new Map<string, Deferred.Deferred<void>>()
  const through = <A, E, R>(
    key: string,
    ready: () => Effect.Effect<A, E, R> | undefined,
    slow: () => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const answer = ready()
      if (answer !== undefined) return answer
      const other = running.get(key)
      if (other !== undefined) return Effect.andThen(Deferred.await(other), through(key, ready, slow))
      const turn = Deferred.makeUnsafe<void>()
      running.set(key, turn)
      return Effect.ensuring(
        slow(),
        Effect.suspend(() => {
          running.delete(key)
          return Deferred.succeed(turn, undefined)
        })
      )
    })
  return through
}
