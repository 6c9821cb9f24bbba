import { Effect } from "effect"
import { currentDate } from "../../platform/Time.ts"
import { type Estimate, type Hold, insufficientCredits, type Payer, type Spent } from "./CreditHold.ts"
import { freeIn, type Lease, type Leases } from "./CreditLeases.ts"

/**
 * A reported count as the database stores it: whole (rounded up), never
 * negative, at most the largest safe integer; `unknown` when it is not a number.
 */
const storable = (count: number, unknown: number): number =>
  Number.isNaN(count) ? unknown : Math.min(Math.max(0, Math.ceil(count)), Number.MAX_SAFE_INTEGER)

/**
 * What a settled call is charged. Its real cost, even past its hold (a
 * provider that counted more tokens than the hold did): the lease then runs
 * a deficit its next reservation must cover, so the balance goes below zero
 * by at most that overrun and the next call is refused. Two exceptions: a
 * cost past any number (a provider's absurd usage) is charged at most the
 * hold and what the lease has free; a lease lost while the call ran (this
 * process stalled past the TTL) charges at most the hold, and the database
 * only what the pool still has free.
 */
const chargeOf = (held: Hold, lease: Lease, spent: Spent) => {
  const cost = storable(spent.credits, held.credits)
  if (lease.lost) return Math.min(cost, held.credits)
  return spent.credits <= Number.MAX_SAFE_INTEGER || Number.isNaN(spent.credits)
    ? cost
    : Math.min(cost, Math.max(held.credits, freeIn(lease)))
}

/** A hold's state in this process: settled at most once. */
interface OpenHold {
  readonly hold: Hold
  readonly lease: Lease
  reported: Spent | undefined
}

/** Holds in flight: taken from the leases, ended once — settled (queued for the group commit) or released. */
export const makeHolds = (leases: Leases, settled: (lease: Lease) => Effect.Effect<void>) => {
  const open = new Map<Hold, OpenHold>()

  const take = (payer: Payer, estimate: Estimate, credits: number) => (lease: Lease): Hold => {
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

  const hold = (payer: Payer, estimate: Estimate) =>
    Effect.suspend(() => {
      const pool = estimate.pool ?? "credits"
      const credits = Math.max(0, Math.ceil(estimate.credits))
      // A worst case past any balance (a huge max_tokens) is refused here, before the database sees it.
      if (!Number.isSafeInteger(credits)) return Effect.fail(insufficientCredits(pool))
      return leases.withRoom(payer.organizationId, pool, credits, take(payer, estimate, credits))
    })

  const settle = Effect.fnUntraced(function*(held: Hold, spent: Spent) {
    const state = close(held, yield* currentDate)
    if (state === undefined) return 0
    const { lease } = state
    const credits = chargeOf(held, lease, spent)
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
    yield* settled(lease)
    return credits
  })

  const release = (held: Hold) => Effect.asVoid(Effect.map(currentDate, (now) => close(held, now)))

  return {
    hold,
    settle,
    release,
    /** Ends a hold as its bracket closes: settled to the last report, else released. */
    finish: (held: Hold) =>
      Effect.suspend(() => {
        const reported = open.get(held)?.reported
        return reported === undefined ? release(held) : Effect.asVoid(settle(held, reported))
      })
  }
}
