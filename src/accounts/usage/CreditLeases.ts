import { Effect } from "effect"
import { newId } from "../../platform/Ids.ts"
import { oneAtATime } from "../../platform/OneAtATime.ts"
import { currentDate } from "../../platform/Time.ts"
import { insufficientCredits } from "./CreditHold.ts"
import type { CreditsRepo, LeaseKey } from "./CreditsRepo.ts"
import type { InsufficientCredits } from "./Errors.ts"
import type { CreditPool, NewUsageEvent } from "./UsageRepo.ts"

/**
 * This process's lease on one organization's pool: a block of the balance
 * reserved in the database (`CreditsRepo.reserve`), from which holds are
 * taken and settled in memory. `leased` is what the lease's row holds as far
 * as this process knows: the open holds, the settled spending not committed
 * yet, and what is free for the next holds.
 */
export interface Lease {
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

/**
 * What the lease has for new holds. Negative when calls settled past their
 * holds spent more than the lease had (an overrun): the next reservation
 * must cover that deficit before any new hold.
 */
export const freeIn = (lease: Lease) => lease.leased - lease.held - lease.spent

const keyOf = (organizationId: string, pool: CreditPool) => `${pool}:${organizationId}`

const opened = (organizationId: string, pool: CreditPool): Lease => ({
  key: { id: newId("lease"), organizationId, pool },
  leased: 0,
  held: 0,
  spent: 0,
  events: [],
  openHolds: 0,
  lastUsed: 0,
  lost: false
})

export type Leases = ReturnType<typeof makeLeases>

/**
 * This process's leases, one per organization and pool: how they grow when a
 * hold does not fit, return when idle, are renewed while alive, and how the
 * expired ones of crashed processes are released.
 */
export const makeLeases = (repo: CreditsRepo["Service"], holdTtlMs: number) => {
  const leases = new Map<string, Lease>()
  const reservingFor = oneAtATime()
  const expiryFrom = (now: Date) => new Date(now.getTime() + holdTtlMs)

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

  /**
   * Grows the balance's lease (or opens one) by what the hold needs — with
   * the lease's deficit, if calls overran it — and, room permitting, as much again.
   */
  const reserve = <A>(key: string, organizationId: string, pool: CreditPool, credits: number, take: (lease: Lease) => A): Effect.Effect<A, InsufficientCredits> =>
    Effect.gen(function*() {
      const current = leases.get(key)
      const opening = current === undefined || current.lost
      const lease = opening ? opened(organizationId, pool) : current
      const needed = credits - freeIn(lease)
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
          return yield* reserve(key, organizationId, pool, credits, take)
        case "Reserved":
          lease.leased += reservation.amount
          leases.set(key, lease)
          return take(lease)
      }
    })

  /** Ends these leases: their rows are deleted and what they still held returns to the pool. */
  const end = (ended: ReadonlyArray<Lease>) => {
    ended.forEach(forget)
    return Effect.forEach(ended, (lease) => repo.end(lease.key), { discard: true })
  }

  return {
    /**
     * Runs `take` on the balance's lease as soon as it has `credits` free:
     * at once when it has, else after reserving more — one reservation per
     * balance at a time: holds arriving meanwhile wait for it and look again,
     * so a burst grows the lease once. 403 when the pool cannot cover it.
     */
    withRoom: <A>(organizationId: string, pool: CreditPool, credits: number, take: (lease: Lease) => A) => {
      const key = keyOf(organizationId, pool)
      return reservingFor(key, () => {
        const lease = leases.get(key)
        return lease !== undefined && !lease.lost && freeIn(lease) >= credits ? Effect.succeed(take(lease)) : undefined
      }, () => reserve(key, organizationId, pool, credits, take))
    },
    lose,
    end,
    /** Every lease this process holds. */
    all: () => [...leases.values()],
    /** Returns the leases no call used for `idleMs` (no open hold, nothing settled to commit); answers how many. */
    returnIdle: (idleMs: number) =>
      Effect.gen(function*() {
        const now = (yield* currentDate).getTime()
        const idle = [...leases.values()].filter((lease) => lease.openHolds === 0 && lease.spent === 0 && now - lease.lastUsed >= idleMs)
        yield* end(idle)
        return idle.length
      }),
    /** Keeps the leases from expiring for another TTL; those whose rows are gone are lost. */
    renewOpen: Effect.gen(function*() {
      const live = [...leases.values()]
      if (live.length === 0) return
      const renewed = new Set(yield* repo.renew(live.map((lease) => lease.key.id), expiryFrom(yield* currentDate)))
      for (const lease of live) if (!renewed.has(lease.key.id)) lose(lease)
    }),
    /** Releases every lease expired at `now` (of any process); answers how many. */
    releaseExpiredBefore: (now: Date) =>
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
  }
}
