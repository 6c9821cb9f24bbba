import { Cause, Data, Duration, Effect } from "effect"

/**
 * The shape every leased background worker shares (scheduled tasks, the
 * knowledge indexer): a claim's work runs while its lease is renewed every
 * third of its duration, and a poll loop claims more work.
 */

/** The lease of the claim `id` was taken over (it expired, another process claimed it). */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly id: string }> {}

/**
 * `work` raced with the renewal of its lease every third of `leaseMs`
 * (`renew` answers whether the lease is still held): fails with `LeaseLost`
 * once a renewal is refused, which interrupts the work.
 */
export const whileLeased = (id: string, leaseMs: number, renew: Effect.Effect<boolean>) =>
<A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E | LeaseLost, R> =>
  Effect.raceFirst(
    work,
    Effect.gen(function*() {
      while (true) {
        yield* Effect.sleep(Duration.millis(leaseMs / 3))
        if (!(yield* renew)) return yield* new LeaseLost({ id })
      }
    })
  )

/**
 * Forks, in the current scope, a loop of `poll` (which answers how many
 * claims it handled): again at once while a poll found a full batch, else
 * after `pollMs`, or as soon as `wake` (new work of this process) succeeds.
 * A failed poll is logged, never ends the loop.
 */
export const pollForever = (options: {
  readonly name: string
  readonly poll: Effect.Effect<number>
  readonly batch: number
  readonly pollMs: number
  readonly wake?: Effect.Effect<void> | undefined
}) => {
  const poll = options.poll.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.as(Effect.logError(`${options.name} poll failed`, cause), 0)
    )
  )
  return Effect.forkScoped(Effect.gen(function*() {
    while (true) {
      const claimed = yield* poll
      if (claimed >= options.batch) continue
      const pause = Effect.sleep(Duration.millis(options.pollMs))
      yield* options.wake === undefined ? pause : Effect.raceFirst(pause, options.wake)
    }
  }))
}
