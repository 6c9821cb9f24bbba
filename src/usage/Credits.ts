import { Cause, Context, Duration, Effect, Layer, Queue, Semaphore, Stream } from "effect"
import type { Principal } from "../auth/Principal.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { newId } from "../platform/Ids.ts"
import { oneAtATime } from "../platform/OneAtATime.ts"
import { currentDate } from "../platform/Time.ts"
import { Storage } from "../storage/Database.ts"
import { creditsOf, CreditsRepo, type LeaseKey, type Spending } from "./CreditsRepo.ts"
import type { CreditPool, NewUsageEvent } from "./UsageRepo.ts"
import { InsufficientCredits } from "./Errors.ts"

/** Who pays for a billable call: the organization, and the company and user it was made for. */
export interface Payer {
  readonly organizationId: string
  readonly companyId: string | null
  readonly userId: string | null
}

/** The principal's organization pays, for its company and user. */
export const payerOf = (principal: Principal): Payer => ({
  organizationId: principal.organizationId,
  companyId: principal.companyId,
  userId: principal.userId
})

/** What a call may cost at most, held before it starts. */
export interface Estimate {
  /** The feature key usage is reported under (`chat`, `content`, `tasks`, `jobs`…). */
  readonly feature: string
  readonly model?: string | undefined
  /** The worst-case cost: what is held. */
  readonly credits: number
  /** The balance drawn on: `credits` (default) or `data`. */
  readonly pool?: CreditPool | undefined
}

/** What a call really cost. */
export interface Spent {
  readonly credits: number
  /** The model that answered, when it differs from the estimate's. */
  readonly model?: string | undefined
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
}

/** Credits held for one call in flight. */
export interface Hold {
  readonly payer: Payer
  readonly feature: string
  readonly model: string
  readonly pool: CreditPool
  /** The credits held. */
  readonly credits: number
  /** Records what the call has cost so far: the bracket forms settle to the last report (none: release). */
  readonly report: (spent: Spent) => Effect.Effect<void>
}

/** The refusal of a hold the pool cannot cover: "Insufficient credits", or "Insufficient data credits". */
export const insufficientCredits = (pool: CreditPool = "credits") => new InsufficientCredits({ pool })

/**
 * A reported count as the database stores it: whole (rounded up), never
 * negative, at most the largest safe integer (a provider's absurd usage
 * then debits the pool to its limit); `unknown` when it is not a number.
 */
const storable = (count: number, unknown: number): number =>
  Number.isNaN(count) ? unknown : Math.min(Math.max(0, Math.ceil(count)), Number.MAX_SAFE_INTEGER)

/**
 * This process's lease on one organization's pool: a block of the balance
 * reserved in the database (`CreditsRepo.reserve`), from which holds are
 * taken and settled in memory. `leased` is what the lease's row holds as far
 * as this process knows: the open holds, the settled spending not committed
 * yet, and what is free for the next holds.
 */
interface Lease {
  readonly key: LeaseKey
  leased: number
  held: number
  /** Settled, not committed yet: the sum of `events`' credits. */
  spent: number
  events: Array<NewUsageEvent>
  openHolds: number
  /** When its last hold ended (clock milliseconds): a lease idle for `CREDIT_LEASE_IDLE_MS` is returned. */
  lastUsed: number
  /** Its row expired and was released (this process stalled past the TTL): new holds open another lease. */
  lost: boolean
}

const freeIn = (lease: Lease) => lease.leased - lease.held - lease.spent

/** A hold's state in this process: settled at most once. */
interface OpenHold {
  readonly hold: Hold
  readonly lease: Lease
  reported: Spent | undefined
}

/**
 * The one way billable features spend credits: hold the worst-case cost
 * before the paid work (403 "Insufficient credits" when it does not fit),
 * then settle to the real cost, releasing the rest.
 *
 * Holds and settlements are in this process's memory, against a **lease**: a
 * block of the organization's balance that one conditional database write
 * reserved for this process (at most half of what was free, growing as calls
 * need more), so that the balance can never be overdrawn, by one process or
 * several on one database. Settled calls are committed in groups, every
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
   * Ends the hold, charging what the call cost — the held amount and, beyond
   * it, what this process's lease has free — and recording one usage event
   * with that charge (committed with the next flush). Answers the charge. A
   * hold already settled or released settles nothing more (0).
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
    const { creditHoldTtlMs, creditFlushMs, creditLeaseIdleMs } = yield* AppConfig
    const leases = new Map<string, Lease>()
    const reservingFor = oneAtATime()
    const open = new Map<Hold, OpenHold>()
    /** Leases with settled calls to commit. */
    const unflushed = new Set<Lease>()
    const settledSignal = yield* Queue.dropping<void>(1)
    const flushing = yield* Semaphore.make(1)
    let closed = false
    const expiryFrom = (now: Date) => new Date(now.getTime() + creditHoldTtlMs)
    const keyOf = (organizationId: string, pool: CreditPool) => `${pool}:${organizationId}`
    /** Drops the lease from its balance (returned, or lost), unless another has taken its place: the next hold opens one. */
    const forget = (lease: Lease) => {
      const key = keyOf(lease.key.organizationId, lease.key.pool)
      if (leases.get(key) === lease) leases.delete(key)
    }
    /** Its row expired and was released: holds on it settle against the pool's free credits, new holds open another. */
    const lose = (lease: Lease) => {
      lease.lost = true
      forget(lease)
    }

    const take = (lease: Lease, payer: Payer, estimate: Estimate, credits: number): Hold => {
      lease.held += credits
      lease.openHolds += 1
      const state: OpenHold = {
        hold: {
          payer,
          feature: estimate.feature,
          model: estimate.model ?? "",
          pool: lease.key.pool,
          credits,
          report: (spent) => Effect.sync(() => void (state.reported = spent))
        },
        lease,
        reported: undefined
      }
      open.set(state.hold, state)
      return state.hold
    }

    /** Grows the balance's lease (or opens one) by what the hold needs and, room permitting, as much again. */
    const reserve = (key: string, payer: Payer, estimate: Estimate, pool: CreditPool, credits: number): Effect.Effect<Hold, InsufficientCredits> =>
      Effect.gen(function*() {
        const current = leases.get(key)
        const opening = current === undefined || current.lost
        const lease: Lease = opening
          ? {
            key: { id: newId("lease"), organizationId: payer.organizationId, pool },
            leased: 0,
            held: 0,
            spent: 0,
            events: [],
            openHolds: 0,
            lastUsed: 0,
            lost: false
          }
          : current
        const needed = credits - Math.max(0, freeIn(lease))
        const reservation = yield* repo.reserve(lease.key, {
          needed,
          wanted: needed + Math.max(credits, lease.leased),
          opening,
          expiresAt: expiryFrom(yield* currentDate)
        })
        switch (reservation._tag) {
          case "Refused":
            return yield* insufficientCredits(pool)
          case "Lost":
            lose(lease)
            return yield* reserve(key, payer, estimate, pool, credits)
          case "Reserved":
            lease.leased += reservation.amount
            leases.set(key, lease)
            return take(lease, payer, estimate, credits)
        }
      })

    /**
     * Takes the hold from the balance's lease when it has room, else reserves
     * more — one reservation per balance at a time: holds arriving meanwhile
     * wait for it and look again, so a burst grows the lease once.
     */
    const holdFrom = (key: string, payer: Payer, estimate: Estimate, pool: CreditPool, credits: number) =>
      reservingFor(key, () => {
        const lease = leases.get(key)
        return lease !== undefined && !lease.lost && freeIn(lease) >= credits
          ? Effect.succeed(take(lease, payer, estimate, credits))
          : undefined
      }, () => reserve(key, payer, estimate, pool, credits))

    const hold = (payer: Payer, estimate: Estimate) =>
      Effect.suspend(() => {
        const pool = estimate.pool ?? "credits"
        const credits = Math.max(0, Math.ceil(estimate.credits))
        // A worst case past any balance (a huge max_tokens) is refused here, before the database sees it.
        if (!Number.isSafeInteger(credits)) return Effect.fail(insufficientCredits(pool))
        return holdFrom(keyOf(payer.organizationId, pool), payer, estimate, pool, credits)
      })

    /** Takes the hold out of the open ones and off its lease: its state only for the first caller, so each hold ends once. */
    const close = (held: Hold, now: Date) => {
      const state = open.get(held)
      if (state === undefined) return undefined
      open.delete(held)
      state.lease.held -= held.credits
      state.lease.openHolds -= 1
      state.lease.lastUsed = now.getTime()
      return state
    }

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
              lease.leased -= spendings[i].spent
              if (!committed[i].alive) lose(lease)
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

    const settle = Effect.fnUntraced(function*(held: Hold, spent: Spent) {
      const state = close(held, yield* currentDate)
      if (state === undefined) return 0
      const { lease } = state
      const cost = storable(spent.credits, held.credits)
      // Beyond its hold, a call may take what its lease has free (the hold itself is free again now).
      const credits = lease.lost ? Math.min(cost, held.credits) : Math.min(cost, Math.max(held.credits, freeIn(lease)))
      const inputTokens = storable(spent.inputTokens ?? 0, 0)
      const outputTokens = storable(spent.outputTokens ?? 0, 0)
      lease.spent += credits
      lease.events.push({
        organizationId: held.payer.organizationId,
        companyId: held.payer.companyId,
        userId: held.payer.userId,
        feature: held.feature,
        model: spent.model ?? held.model,
        credits,
        tokens: Math.min(inputTokens + outputTokens, Number.MAX_SAFE_INTEGER),
        inputTokens,
        outputTokens
      })
      unflushed.add(lease)
      if (closed) yield* flush
      else Queue.offerUnsafe(settledSignal, undefined)
      return credits
    })

    const release = (held: Hold) => Effect.asVoid(Effect.map(currentDate, (now) => close(held, now)))

    /** Ends a hold as its bracket closes: settled to the last report, else released. */
    const finish = (held: Hold) =>
      Effect.suspend(() => {
        const reported = open.get(held)?.reported
        return reported === undefined ? release(held) : Effect.asVoid(settle(held, reported))
      })

    const endLeases = (ended: ReadonlyArray<Lease>) => {
      ended.forEach(forget)
      return Effect.forEach(ended, (lease) => repo.end(lease.key), { discard: true })
    }

    const releaseExpiredBefore = (now: Date) =>
      Effect.gen(function*() {
        let released = 0
        while (true) {
          const expired = yield* repo.expired(now, 100)
          // Ending a lease deletes its row at most once, so a lease two sweepers race for is released once.
          yield* Effect.forEach(expired, (key) => repo.end(key), { discard: true })
          released += expired.length
          if (expired.length < 100) return released
        }
      })

    // The embedded database serves one process (its folder is locked): every lease it holds is a predecessor's.
    if ((yield* Storage).backend === "pglite") yield* releaseExpiredBefore(new Date(Date.UTC(9999, 11, 31)))

    // Group commit: a settlement wakes the flusher, which lets more gather for `CREDIT_FLUSH_MS`, then commits them all.
    yield* Effect.forkScoped(Effect.forever(
      Queue.take(settledSignal).pipe(
        Effect.andThen(Effect.sleep(Duration.millis(creditFlushMs))),
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
    // At shutdown: commit what was settled and return every lease; later settlements commit at once.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return Effect.andThen(flush, endLeases([...leases.values()]))
      }).pipe(Effect.catchCause((cause) => Effect.logError("Returning credit leases at shutdown failed", cause)))
    )

    return {
      hold,
      settle,
      release,
      withHold: (payer, estimate, use) => Effect.acquireUseRelease(hold(payer, estimate), use, finish),
      stream: (payer, estimate, use) => Stream.unwrap(Effect.map(Effect.acquireRelease(hold(payer, estimate), finish), use)),
      flush,
      returnIdle: Effect.gen(function*() {
        const now = (yield* currentDate).getTime()
        const idle = [...leases.values()].filter((lease) =>
          lease.openHolds === 0 && lease.spent === 0 && now - lease.lastUsed >= creditLeaseIdleMs
        )
        yield* endLeases(idle)
        return idle.length
      }),
      renewOpen: Effect.gen(function*() {
        const live = [...leases.values()]
        if (live.length === 0) return
        const renewed = new Set(yield* repo.renew(live.map((lease) => lease.key.id), expiryFrom(yield* currentDate)))
        for (const lease of live) if (!renewed.has(lease.key.id)) lose(lease)
      }),
      releaseExpired: Effect.flatMap(currentDate, releaseExpiredBefore)
    }
  }))

  /**
   * The background worker of a server process: returns idle leases every
   * `CREDIT_LEASE_IDLE_MS`, and every third of `CREDIT_HOLD_TTL_MS` renews
   * this process's leases and releases expired ones.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const credits = yield* Credits
    const { creditHoldTtlMs, creditLeaseIdleMs } = yield* AppConfig
    const every = (millis: number, pass: Effect.Effect<unknown>) =>
      Effect.forkScoped(Effect.forever(Effect.andThen(
        Effect.sleep(Duration.millis(millis)),
        pass.pipe(Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("Credit lease maintenance failed", cause)
        ))
      )))
    yield* every(creditLeaseIdleMs, credits.returnIdle)
    yield* every(creditHoldTtlMs / 3, Effect.andThen(credits.renewOpen, credits.releaseExpired))
  }))
}
