import { Duration, Effect, Queue, Semaphore } from "effect"
import type { Lease, Leases } from "./CreditLeases.ts"
import { creditsOf, type CreditsRepo, type Spending } from "./CreditsRepo.ts"

/**
 * Settled calls committed together: the first settlement wakes the flusher,
 * which waits `flushMs` for more, then in one transaction moves each lease's
 * spending from held to usage and records all their usage events. A failed
 * commit keeps its events for the next one. After `close` (shutdown), every
 * settlement commits at once.
 */
export const makeGroupCommit = Effect.fnUntraced(function*(repo: CreditsRepo["Service"], leases: Leases, flushMs: number) {
  /** Leases with settled calls to commit. */
  const unflushed = new Set<Lease>()
  const settledSignal = yield* Queue.dropping<void>(1)
  const flushing = yield* Semaphore.make(1)
  let closed = false

  const flush: Effect.Effect<void> = flushing.withPermits(1)(Effect.suspend(() => {
    const batch = [...unflushed].filter((lease) => lease.events.length > 0)
    unflushed.clear()
    if (batch.length === 0) return Effect.void
    const spendings: Array<Spending & { readonly spent: number }> = batch.map((lease) => {
      const events = lease.events
      lease.events = []
      return { lease: lease.key, events, spent: creditsOf(events) }
    })
    return repo.commit(spendings).pipe(
      Effect.tap((committed) =>
        Effect.sync(() =>
          batch.forEach((lease, i) => {
            lease.spent -= spendings[i].spent
            // An overrun is charged beyond the lease's row: only what the row paid leaves the lease.
            lease.leased -= committed[i].fromLease
            if (!committed[i].alive) leases.lose(lease)
          })
        )
      ),
      // Nothing settled is dropped: a failed commit is retried with the next flush.
      Effect.onError(() =>
        Effect.sync(() =>
          batch.forEach((lease, i) => {
            lease.events = [...spendings[i].events, ...lease.events]
            unflushed.add(lease)
          })
        )
      ),
      Effect.asVoid
    )
  }))

  // A settlement wakes the flusher, which lets more gather for `flushMs`, then commits them all.
  yield* Effect.forkScoped(Effect.forever(
    Queue.take(settledSignal).pipe(
      Effect.andThen(Effect.sleep(Duration.millis(flushMs))),
      Effect.andThen(flush),
      // Settlements made meanwhile woke the flusher again; the ones a failed commit kept are retried a second later.
      Effect.catchCause((cause) =>
        Effect.logError("Committing settled credits failed; retrying in a second", cause).pipe(
          Effect.andThen(Effect.sleep("1 second")),
          Effect.andThen(Effect.sync(() => Queue.offerUnsafe(settledSignal, undefined)))
        )
      )
    )
  ))

  return {
    flush,
    /** Queues the lease's new settled call for the next group (at once after `close`). */
    settled: (lease: Lease): Effect.Effect<void> => {
      unflushed.add(lease)
      if (closed) return flush
      Queue.offerUnsafe(settledSignal, undefined)
      return Effect.void
    },
    /** From now on every settlement commits at once (shutdown). */
    close: () => void (closed = true)
  }
})
