import { Cause, Context, Duration, Effect, Layer, Stream } from "effect"
import { currentDate } from "../../platform/Time.ts"
import { Storage } from "../../storage/Database.ts"
import type { Estimate, Hold, Payer, Spent } from "./CreditHold.ts"
import { makeHolds } from "./CreditHolds.ts"
import { makeLeases } from "./CreditLeases.ts"
import { CreditsRepo } from "./CreditsRepo.ts"
import type { InsufficientCredits } from "./Errors.ts"
import { makeGroupCommit } from "./GroupCommit.ts"
import { UsageConfig } from "./UsageConfig.ts"

export { type Estimate, type Hold, insufficientCredits, type Payer, payerOf, type Spent } from "./CreditHold.ts"

/**
 * The one way billable features spend credits: hold the worst-case cost
 * before the paid work (403 "Insufficient credits" when it does not fit),
 * then settle to the real cost, releasing the rest. Its parts: the leases
 * (`CreditLeases`), the holds taken from them (`CreditHolds`) and the
 * commit of settled calls (`GroupCommit`).
 *
 * Holds and settlements are in this process's memory, against a **lease**: a
 * block of the organization's balance that one conditional database write
 * reserved for this process (at most half of what was free, growing as calls
 * need more), so that every hold is covered by the balance, in one process or
 * several on one database; only a call that cost more than its hold can take
 * the balance below zero, by that overrun. Settled calls are committed in groups, every
 * `CREDIT_FLUSH_MS`: their usage events and the debit in one transaction
 * (`flush` commits at once; readers of usage call it first). A lease no call
 * used for `CREDIT_LEASE_IDLE_MS` returns to the pool, and every lease at
 * shutdown; a crashed process's leases expire after `CREDIT_HOLD_TTL_MS` and
 * `releaseExpired` (the `worker`) returns them, with the calls it settled
 * but had not committed yet (the crash window) uncharged.
 */
export class Credits extends Context.Service<Credits, {
  /** Holds `estimate.credits`; 403 "Insufficient credits", and nothing held, when the balance cannot cover it. */
  readonly hold: (payer: Payer, estimate: Estimate) => Effect.Effect<Hold, InsufficientCredits>
  /**
   * Ends the hold, charging what the call cost — even past the hold: the
   * balance may then go below zero by that overrun, and the next hold is
   * refused — and recording one usage event with that charge (committed with
   * the next flush). Answers the charge. A hold already settled or released
   * settles nothing more (0).
   */
  readonly settle: (hold: Hold, spent: Spent) => Effect.Effect<number>
  /** Ends the hold without a charge or a usage event (the paid work never happened). */
  readonly release: (hold: Hold) => Effect.Effect<void>
  /**
   * Holds, runs `use` with the hold, and settles to what `use` last reported
   * with `hold.report` when it ends — succeeded, failed or interrupted —
   * or releases when it reported nothing.
   */
  readonly withHold: <A, E, R>(
    payer: Payer,
    estimate: Estimate,
    use: (hold: Hold) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | InsufficientCredits, R>
  /**
   * The stream form of `withHold`: holds when the stream starts (so a refusal
   * is the stream's first failure) and settles to the last report when it
   * ends, runs dry, fails or is interrupted (a client that left).
   */
  readonly stream: <A, E, R>(
    payer: Payer,
    estimate: Estimate,
    use: (hold: Hold) => Stream.Stream<A, E, R>
  ) => Stream.Stream<A, E | InsufficientCredits, R>
  /** Commits every call this process settled so far: read usage or balances after it. */
  readonly flush: Effect.Effect<void>
  /** Returns to the pool the leases no call used for `CREDIT_LEASE_IDLE_MS`; answers how many. */
  readonly returnIdle: Effect.Effect<number>
  /** Keeps this process's leases from expiring, for another `CREDIT_HOLD_TTL_MS`. */
  readonly renewOpen: Effect.Effect<void>
  /** Releases every expired lease (of a crashed process); answers how many. Safe in several processes at once. */
  readonly releaseExpired: Effect.Effect<number>
}>()("usage/Credits") {
  static readonly layer = Layer.effect(Credits, Effect.gen(function*() {
    const repo = yield* CreditsRepo
    const { holdTtlMs, flushMs, leaseIdleMs } = yield* UsageConfig
    const leases = makeLeases(repo, holdTtlMs)
    const commits = yield* makeGroupCommit(repo, leases, flushMs)
    const holds = makeHolds(leases, commits.settled)

    // The embedded database serves one process (its folder is locked): every lease it holds is a predecessor's.
    if ((yield* Storage).backend === "pglite") yield* leases.releaseExpiredBefore(new Date(Date.UTC(9999, 11, 31)))

    // At shutdown: commit what was settled and return every lease; later settlements commit at once.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        commits.close()
        return Effect.andThen(commits.flush, leases.end(leases.all()))
      }).pipe(Effect.catchCause((cause) => Effect.logError("Returning credit leases at shutdown failed", cause)))
    )

    return {
      hold: holds.hold,
      settle: holds.settle,
      release: holds.release,
      withHold: (payer, estimate, use) => Effect.acquireUseRelease(holds.hold(payer, estimate), use, holds.finish),
      stream: (payer, estimate, use) =>
        Stream.unwrap(Effect.map(Effect.acquireRelease(holds.hold(payer, estimate), holds.finish), use)),
      flush: commits.flush,
      returnIdle: leases.returnIdle(leaseIdleMs),
      renewOpen: leases.renewOpen,
      releaseExpired: Effect.flatMap(currentDate, leases.releaseExpiredBefore)
    }
  }))

  /**
   * The background worker of a server process: returns idle leases every
   * `CREDIT_LEASE_IDLE_MS`, and every third of `CREDIT_HOLD_TTL_MS` renews
   * this process's leases and releases expired ones.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const credits = yield* Credits
    const { holdTtlMs, leaseIdleMs } = yield* UsageConfig
    const every = (millis: number, pass: Effect.Effect<unknown>) =>
      Effect.forkScoped(Effect.forever(Effect.andThen(
        Effect.sleep(Duration.millis(millis)),
        pass.pipe(Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("Credit lease maintenance failed", cause)
        ))
      )))
    yield* every(leaseIdleMs, credits.returnIdle)
    yield* every(holdTtlMs / 3, Effect.andThen(credits.renewOpen, credits.releaseExpired))
  }))
}
