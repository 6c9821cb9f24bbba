import type { Effect } from "effect"
import type { Principal } from "../../auth/Principal.ts"
import { InsufficientCredits } from "./Errors.ts"
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
