import { Context, Effect, Layer, Option } from "effect"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.ts"
import { Forbidden } from "../platform/Errors.ts"
import { type CreditPool, UsageRepo } from "./UsageRepo.ts"

/** Who pays for a billable call: the organization, and the company and user it was made for. */
export interface Payer {
  readonly organizationId: string
  readonly companyId: string | null
  readonly userId: string | null
}

export interface Usage {
  /** The feature key usage is reported under (`chat`, `content`, `tasks`, `jobs`…). */
  readonly feature: string
  readonly model?: string | undefined
  readonly credits: number
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
}

export const insufficientCredits = () => new Forbidden({ error: "Insufficient credits" })

/** Credits a model call costs: one per started thousand tokens, at least one. */
export const creditsForTokens = (tokens: number): number => Math.max(1, Math.ceil(tokens / 1000))

/**
 * The one way billable features spend credits. Debits are conditional
 * updates in the database, so concurrent calls can never spend past the
 * limit, and each successful debit writes exactly one usage event.
 */
export class Credits extends Context.Service<Credits, {
  /** Fails with 403 "Insufficient credits" unless `amount` credits remain in the pool. */
  readonly ensureAvailable: (payer: Payer, amount?: number, pool?: CreditPool) => Effect.Effect<void, Forbidden>
  /** Debits the usage and records its event; 403 and nothing recorded when the pool cannot cover it. */
  readonly charge: (payer: Payer, usage: Usage, pool?: CreditPool) => Effect.Effect<void, Forbidden>
  /**
   * Bills usage that already happened (a model answer already generated):
   * debits as much of it as the pool still holds — never past the limit —
   * and always records the event. Answers the credits debited.
   */
  readonly settle: (payer: Payer, usage: Usage, pool?: CreditPool) => Effect.Effect<number>
}>()("usage/Credits") {
  static readonly layer = Layer.effect(Credits, Effect.gen(function*() {
    const organizations = yield* OrganizationsRepo
    const usage = yield* UsageRepo
    return {
      ensureAvailable: (payer, amount = 1, pool = "credits") =>
        Effect.flatMap(organizations.get(payer.organizationId), (organization) => {
          const left = Option.match(organization, {
            onNone: () => 0,
            onSome: (o) => pool === "credits" ? o.creditLimit - o.creditUsage : o.dataCreditLimit - o.dataCreditUsage
          })
          return left >= amount ? Effect.void : Effect.fail(insufficientCredits())
        }),
      charge: (payer, spent, pool = "credits") =>
        Effect.flatMap(
          usage.charge(pool, spent.credits, eventOf(payer, spent), "exact"),
          (debited) => (debited === undefined ? Effect.fail(insufficientCredits()) : Effect.void)
        ),
      settle: (payer, spent, pool = "credits") =>
        Effect.map(usage.charge(pool, spent.credits, eventOf(payer, spent), "upToBalance"), (debited) => debited ?? 0)
    }
  }))
}

const eventOf = (payer: Payer, spent: Usage) => {
  const inputTokens = spent.inputTokens ?? 0
  const outputTokens = spent.outputTokens ?? 0
  return {
    organizationId: payer.organizationId,
    companyId: payer.companyId,
    userId: payer.userId,
    feature: spent.feature,
    model: spent.model ?? "",
    tokens: inputTokens + outputTokens,
    inputTokens,
    outputTokens
  }
}
