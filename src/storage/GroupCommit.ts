import { Deferred, Effect, Exit } from "effect"

/**
 * Writes coalesced by group commit: each caller hands in its item and waits
 * for its own answer. When no write is in progress, the items waiting (at most
 * `maxGroup`) are written at once in one call of `write`; items that arrive
 * meanwhile wait only for it, and are written together right after it. So no
 * item waits for a timer or for other work: a group is exactly the items that
 * arrived while the previous write ran. `write` answers one value per item, in
 * order; its failure is every item's of the group. The writing fiber lives
 * only while items wait (detached: an item's caller interrupted does not stop
 * the others' write), so the writer needs no scope.
 */
export const groupCommit = <I, A>(
  write: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<A>>,
  maxGroup: number
): (item: I) => Effect.Effect<A> => {
  let waiting: Array<readonly [I, Deferred.Deferred<A>]> = []
  let writing = false
  const writeWaiting: Effect.Effect<void> = Effect.suspend(() => {
    if (waiting.length === 0) {
      writing = false
      return Effect.void
    }
    const group = waiting.slice(0, maxGroup)
    waiting = waiting.slice(group.length)
    return Effect.exit(write(group.map(([item]) => item))).pipe(
      Effect.map((exit) => {
        for (const [index, [, answer]] of group.entries()) Deferred.doneUnsafe(answer, Exit.map(exit, (answers) => answers[index]!))
      }),
      Effect.andThen(writeWaiting)
    )
  })
  return (item) =>
    Effect.suspend(() => {
      const answer = Deferred.makeUnsafe<A>()
      waiting.push([item, answer])
      if (writing) return Deferred.await(answer)
      writing = true
      return Effect.andThen(Effect.forkDetach(writeWaiting), Deferred.await(answer))
    })
}
