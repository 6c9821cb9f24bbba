import { Cause, Context, Duration, Effect, Layer, Stream } from "effect"
import type { Principal } from "../auth/Principal.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { Forbidden } from "../platform/Errors.ts"
import { newId } from "../platform/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import { CreditsRepo, type HoldKey } from "./CreditsRepo.ts"
import type { CreditPool } from "./UsageRepo.ts"

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
  readonly id: string
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
export const insufficientCredits = (pool: CreditPool = "credits") =>
  new Forbidden({ error: pool === "data" ? "Insufficient data credits" : "Insufficient credits" })

/**
 * A reported count as the database stores it: whole (rounded up), never
 * negative, at most the largest safe integer (a provider's absurd usage
 * then debits the pool to its limit); `unknown` when it is not a number.
 */
const storable = (count: number, unknown: number): number =>
  Number.isNaN(count) ? unknown : Math.min(Math.max(0, Math.ceil(count)), Number.MAX_SAFE_INTEGER)

const keyOf = (held: Hold): HoldKey => ({ id: held.id, organizationId: held.payer.organizationId, pool: held.pool })

/** A hold's state in this process: renewed while open, and settled at most once. */
interface OpenHold {
  readonly hold: Hold
  reported: Spent | undefined
}

/**
 * The one way billable features spend credits: hold the worst-case cost
 * before the paid work (403 "Insufficient credits" when it does not fit),
 * then settle to the real cost, releasing the rest. Holds are rows in the
 * database, renewed while this process lives; a crashed process's holds
 * expire after `CREDIT_HOLD_TTL_MS` and `releaseExpired` (the `worker`)
 * returns them to the pool. Prefer the bracket forms (`withHold`, `stream`):
 * they settle however the work ends.
 */
export class Credits extends Context.Service<Credits, {
  /** Holds `estimate.credits`; 403 "Insufficient credits", and nothing held, when the balance cannot cover it. */
  readonly hold: (payer: Payer, estimate: Estimate) => Effect.Effect<Hold, Forbidden>
  /**
   * Ends the hold, debiting what the call cost — the held amount and, beyond
   * it, what the pool still has free, never past the limit — and recording one
   * usage event with the credits debited. Answers them. A hold already settled
   * or released settles nothing more (0).
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
  ) => Effect.Effect<A, E | Forbidden, R>
  /**
   * The stream form of `withHold`: holds when the stream starts (so a refusal
   * is the stream's first failure) and settles to the last report when it
   * ends, runs dry, fails or is interrupted (a client that left).
   */
  readonly stream: <A, E, R>(
    payer: Payer,
    estimate: Estimate,
    use: (hold: Hold) => Stream.Stream<A, E, R>
  ) => Stream.Stream<A, E | Forbidden, R>
  /** Keeps this process's open holds from expiring, for another `CREDIT_HOLD_TTL_MS`. */
  readonly renewOpen: Effect.Effect<void>
  /** Releases every expired hold (of a crashed process); answers how many. Safe in several processes at once. */
  readonly releaseExpired: Effect.Effect<number>
}>()("usage/Credits") {
  static readonly layer = Layer.effect(Credits, Effect.gen(function*() {
    const repo = yield* CreditsRepo
    const { creditHoldTtlMs } = yield* AppConfig
    const open = new Map<string, OpenHold>()
    const expiryFrom = (now: Date) => new Date(now.getTime() + creditHoldTtlMs)

    const hold = Effect.fn("Credits.hold")(function*(payer: Payer, estimate: Estimate) {
      const id = newId("hold")
      const pool = estimate.pool ?? "credits"
      const credits = Math.max(0, Math.ceil(estimate.credits))
      // A worst case past any balance (a huge max_tokens) is refused here, before the database sees it.
      if (!Number.isSafeInteger(credits)) return yield* insufficientCredits(pool)
      const held = yield* repo.hold({
        id,
        organizationId: payer.organizationId,
        pool,
        amount: credits,
        expiresAt: expiryFrom(yield* currentDate)
      })
      if (!held) return yield* insufficientCredits(pool)
      const state: OpenHold = {
        hold: {
          id,
          payer,
          feature: estimate.feature,
          model: estimate.model ?? "",
          pool,
          credits,
          report: (spent) => Effect.sync(() => void (state.reported = spent))
        },
        reported: undefined
      }
      open.set(id, state)
      return state.hold
    })

    /** Takes the hold out of the open ones: true only for the first caller, so each hold ends once. */
    const close = (held: Hold) => open.delete(held.id)

    const settle = (held: Hold, spent: Spent) =>
      Effect.suspend(() => {
        if (!close(held)) return Effect.succeed(0)
        const inputTokens = storable(spent.inputTokens ?? 0, 0)
        const outputTokens = storable(spent.outputTokens ?? 0, 0)
        return repo.settle(keyOf(held), storable(spent.credits, held.credits), {
          organizationId: held.payer.organizationId,
          companyId: held.payer.companyId,
          userId: held.payer.userId,
          feature: held.feature,
          model: spent.model ?? held.model,
          tokens: Math.min(inputTokens + outputTokens, Number.MAX_SAFE_INTEGER),
          inputTokens,
          outputTokens
        })
      }).pipe(Effect.withSpan("Credits.settle"))

    const release = (held: Hold) =>
      Effect.suspend(() => (close(held) ? Effect.asVoid(repo.settle(keyOf(held), 0, undefined)) : Effect.void))

    /** Ends a hold as its bracket closes: settled to the last report, else released. */
    const finish = (held: Hold) =>
      Effect.suspend(() => {
        const reported = open.get(held.id)?.reported
        return reported === undefined ? release(held) : Effect.asVoid(settle(held, reported))
      })

    return {
      hold,
      settle,
      release,
      withHold: (payer, estimate, use) => Effect.acquireUseRelease(hold(payer, estimate), use, finish),
      stream: (payer, estimate, use) => Stream.unwrap(Effect.map(Effect.acquireRelease(hold(payer, estimate), finish), use)),
      renewOpen: Effect.suspend(() =>
        open.size === 0 ? Effect.void : Effect.flatMap(currentDate, (now) => repo.renew([...open.keys()], expiryFrom(now)))
      ),
      releaseExpired: Effect.gen(function*() {
        let released = 0
        while (true) {
          const expired = yield* repo.expired(yield* currentDate, 100)
          // Settling a hold deletes it at most once, so a hold two sweepers race for is released once.
          yield* Effect.forEach(expired, (key) => repo.settle(key, 0, undefined), { discard: true })
          released += expired.length
          if (expired.length < 100) return released
        }
      })
    }
  }))

  /**
   * The background worker of a server process: every third of
   * `CREDIT_HOLD_TTL_MS`, renews this process's open holds and releases
   * expired ones.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const credits = yield* Credits
    const { creditHoldTtlMs } = yield* AppConfig
    const pass = Effect.andThen(credits.renewOpen, credits.releaseExpired).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("Credit hold maintenance failed", cause)
      )
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(creditHoldTtlMs / 3)), pass)))
  }))
}
