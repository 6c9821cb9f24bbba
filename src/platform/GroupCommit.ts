import { Deferred, Effect, Exit, Queue, type Scope } from "effect"

/**
 * A group commit: items offered while a group commits wait and are committed
 * together in the next one (at most `maxGroup`), by one call of `commit`,
 * which answers each item's result. Each caller resumes only once its group
 * committed, so an acknowledgement sent then always follows a durable store;
 * a failed group fails each of its items.
 */
export const groupCommit = <A, B, E>(
  maxGroup: number,
  commit: (group: ReadonlyArray<A>) => Effect.Effect<(item: A) => B, E>
): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const waiting = yield* Queue.unbounded<readonly [A, Deferred.Deferred<B, E>]>()
    yield* Effect.forkScoped(Effect.forever(
      Effect.flatMap(Queue.takeBetween(waiting, 1, maxGroup), (group) =>
        Effect.flatMap(Effect.exit(commit(group.map(([item]) => item))), (exit) =>
          Effect.forEach(group, ([item, outcome]) => Deferred.done(outcome, Exit.map(exit, (resultOf) => resultOf(item))), { discard: true })))
    ))
    return (item: A) =>
      Effect.flatMap(Deferred.make<B, E>(), (outcome) => Effect.andThen(Queue.offer(waiting, [item, outcome]), Deferred.await(outcome)))
  })
