import { Context, Effect, Layer, Order } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../../platform/Ids.ts"
import { toNumber } from "../../storage/Rows.ts"
import type { CreditPool, NewUsageEvent } from "./UsageRepo.ts"

/**
 * A lease: a block of one organization's pool that one process reserved,
 * stored as a row of `credit_holds` whose amount counts in the
 * organization's held total until it is spent, returned or expires.
 */
export interface LeaseKey {
  readonly id: string
  readonly organizationId: string
  readonly pool: CreditPool
}

/** What a reservation got: `amount` more for the lease, or why nothing. */
export type Reservation =
  | { readonly _tag: "Reserved"; readonly amount: number }
  /** The pool cannot cover `needed` (or the organization does not exist). */
  | { readonly _tag: "Refused" }
  /** The lease's row is gone: it expired and a sweeper released it. */
  | { readonly _tag: "Lost" }

export interface ReserveRequest {
  /** The least that must be added for the reservation to be worth anything. */
  readonly needed: number
  /** What the lease would like, of which it gets at most half of what is free (never less than `needed`). */
  readonly wanted: number
  /** True for a lease that has no row yet. */
  readonly opening: boolean
  readonly expiresAt: Date
}

/** Settled calls of one lease, committed together: their costs (the events' `credits`) move from held to usage. */
export interface Spending {
  readonly lease: LeaseKey
  readonly events: ReadonlyArray<NewUsageEvent>
}

/** What a spending was charged, how much of it its lease paid (the rest: an overrun), and whether the lease was still there. */
export interface Committed {
  readonly credits: number
  readonly fromLease: number
  readonly alive: boolean
}

/** The organization balances' ledger: leases, the usage committed from them, and their expiry. */
export interface CreditsRepository {
  /**
   * Adds to the lease (creating its row when `opening`) `needed` and up to
   * `wanted`, bounded by half of what the pool has free, when usage +
   * everything held + `needed` stays within the limit: one conditional write.
   */
  readonly reserve: (lease: LeaseKey, request: ReserveRequest) => Effect.Effect<Reservation>
  /**
   * In one transaction, per spending: charges the events' credits to the
   * pool's usage, paid from the lease as far as it holds them (the rest, an
   * overrun, takes the balance below zero) — when the lease's row is gone
   * (expired), only what the pool still has free — and records the events,
   * each with the credits it was actually charged. Answers, per spending,
   * what it was charged and what its lease paid.
   */
  readonly commit: (spendings: ReadonlyArray<Spending>) => Effect.Effect<ReadonlyArray<Committed>>
  /** Deletes the lease's row (when it still exists) and frees what it still held. */
  readonly end: (lease: LeaseKey) => Effect.Effect<void>
  /** Moves the expiry of the given leases; answers the ids whose rows still exist. */
  readonly renew: (ids: ReadonlyArray<string>, expiresAt: Date) => Effect.Effect<ReadonlyArray<string>>
  /** Up to `limit` leases expired at `now`, oldest first. */
  readonly expired: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<LeaseKey>>
}

const columnsOf = (pool: CreditPool) =>
  pool === "credits"
    ? { limit: "credit_limit", usage: "credit_usage", held: "credit_held" }
    : { limit: "data_credit_limit", usage: "data_credit_usage", held: "data_credit_held" }

/** The credits of settled calls. */
export const creditsOf = (events: ReadonlyArray<NewUsageEvent>) => events.reduce((total, event) => total + event.credits, 0)

/** The events with their credits charged in order until `charged` runs out (all of it unless the lease was lost). */
const chargedEvents = (events: ReadonlyArray<NewUsageEvent>, charged: number) => {
  let left = charged
  return events.map((event) => {
    const credits = Math.min(event.credits, left)
    left -= credits
    return { ...event, credits }
  })
}

/** The order rows are locked in: organizations first, then their leases, each by id. */
const byLockOrder: Order.Order<Spending> = Order.combine(
  Order.mapInput(Order.String, (spending: Spending) => spending.lease.organizationId),
  Order.mapInput(Order.String, (spending: Spending) => spending.lease.id)
)

/** The organization was deleted (its leases with it): nothing to charge. */
const gone: Committed = { credits: 0, fromLease: 0, alive: false }
const refused: Reservation = { _tag: "Refused" }
const lost: Reservation = { _tag: "Lost" }

export class CreditsRepo extends Context.Service<CreditsRepo, CreditsRepository>()("usage/CreditsRepo") {
  static readonly layer = Layer.effect(CreditsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One parameter for any number of events (a JSON array), so that the statement stays one prepared statement.
    const insertEvents = (events: ReadonlyArray<NewUsageEvent & { readonly pool: CreditPool }>) =>
      sql`INSERT INTO usage_events
          (id, organization_id, company_id, user_id, feature, model, pool, credits, tokens, input_tokens, output_tokens)
        SELECT id, organization_id, company_id, user_id, feature, model, pool, credits, tokens, input_tokens, output_tokens
        FROM jsonb_to_recordset(${JSON.stringify(events.map((event) => ({
          id: newId("use"),
          organization_id: event.organizationId,
          company_id: event.companyId,
          user_id: event.userId,
          feature: event.feature,
          model: event.model,
          pool: event.pool,
          credits: event.credits,
          tokens: event.tokens,
          input_tokens: event.inputTokens,
          output_tokens: event.outputTokens
        })))}::jsonb) AS event(id text, organization_id text, company_id text, user_id text, feature text, model text, pool text,
          credits bigint, tokens bigint, input_tokens bigint, output_tokens bigint)`
    const debit = (spending: Spending) => {
      const { lease } = spending
      const { limit, usage, held } = columnsOf(lease.pool)
      const spent = creditsOf(spending.events)
      // A live lease pays what it holds and is charged any overrun beyond it; a lost one (swept after expiry)
      // pays only from what nobody holds.
      return Effect.map(
        sql<{ readonly credits: unknown; readonly freed: unknown; readonly alive: boolean }>`
          WITH before AS (
            SELECT ${sql(usage)} AS used, ${sql(held)} AS held, ${sql(limit)} AS lim
            FROM organizations WHERE id = ${lease.organizationId} FOR UPDATE
          ), lease AS (
            SELECT id, amount FROM credit_holds WHERE id = ${lease.id} AND EXISTS (SELECT 1 FROM before) FOR UPDATE
          ), spent AS (
            UPDATE credit_holds SET amount = greatest(lease.amount - ${spent}::bigint, 0)
            FROM lease WHERE credit_holds.id = lease.id RETURNING least(lease.amount, ${spent}::bigint) AS freed
          ), debit AS (
            SELECT
              CASE WHEN EXISTS (SELECT 1 FROM spent) THEN ${spent}::bigint
                ELSE least(${spent}::bigint, greatest(lim - used - held, 0)) END AS credits,
              coalesce((SELECT freed FROM spent), 0) AS freed,
              EXISTS (SELECT 1 FROM spent) AS alive
            FROM before
          )
          UPDATE organizations SET ${sql(usage)} = ${sql(usage)} + debit.credits, ${sql(held)} = ${sql(held)} - debit.freed
          FROM debit WHERE organizations.id = ${lease.organizationId}
          RETURNING debit.credits, debit.freed, debit.alive`,
        (rows): Committed =>
          rows.length === 0 ? gone : { credits: toNumber(rows[0].credits), fromLease: toNumber(rows[0].freed), alive: rows[0].alive }
      )
    }
    return {
      reserve: Effect.fn("CreditsRepo.reserve")(function*(lease, request) {
        const { limit, usage, held } = columnsOf(lease.pool)
        const rows = yield* sql<{ readonly amount: unknown; readonly alive: boolean }>`
          WITH organization AS (
            SELECT id, ${sql(limit)} AS lim, ${sql(usage)} AS used, ${sql(held)} AS held
            FROM organizations WHERE id = ${lease.organizationId} FOR UPDATE
          ), lease AS (
            SELECT id FROM credit_holds WHERE id = ${lease.id} AND EXISTS (SELECT 1 FROM organization) FOR UPDATE
          ), free AS (
            SELECT id, greatest(${request.needed}::bigint, least(${request.wanted}::bigint, (lim - used - held) / 2)) AS amount
            FROM organization
            WHERE used + held + ${request.needed}::bigint <= lim AND (${request.opening} OR EXISTS (SELECT 1 FROM lease))
          ), reserved AS (
            UPDATE organizations SET ${sql(held)} = organizations.${sql(held)} + free.amount
            FROM free WHERE organizations.id = free.id
            RETURNING free.amount
          ), saved AS (
            INSERT INTO credit_holds (id, organization_id, pool, amount, expires_at)
            SELECT ${lease.id}, ${lease.organizationId}, ${lease.pool}, amount, ${request.expiresAt} FROM reserved
            ON CONFLICT (id) DO UPDATE SET amount = credit_holds.amount + EXCLUDED.amount, expires_at = EXCLUDED.expires_at
          )
          SELECT (SELECT amount FROM reserved) AS amount, EXISTS (SELECT 1 FROM lease) AS alive`
        const { amount, alive } = rows[0]
        if (amount !== null && amount !== undefined) return { _tag: "Reserved", amount: toNumber(amount) } as const
        return request.opening || alive ? refused : lost
      }, Effect.orDie),
      commit: (spendings) =>
        spendings.length === 0 ? Effect.succeed([]) : sql.withTransaction(Effect.gen(function*() {
          // Debited in one order (organization, then lease), the order renewals lock in too: no two deadlock.
          const ordered = [...spendings].sort(byLockOrder)
          const charged = new Map<Spending, Committed>()
          for (const spending of ordered) charged.set(spending, yield* debit(spending))
          const events = spendings.flatMap((spending) =>
            chargedEvents(spending.events, charged.get(spending)!.credits).map((event) => ({ ...event, pool: spending.lease.pool }))
          )
          if (events.length > 0) yield* insertEvents(events)
          return spendings.map((spending) => charged.get(spending)!)
        })).pipe(Effect.orDie),
      end: Effect.fn("CreditsRepo.end")(function*(lease) {
        const { held } = columnsOf(lease.pool)
        yield* sql`
          WITH organization AS (SELECT id FROM organizations WHERE id = ${lease.organizationId} FOR UPDATE),
          ended AS (DELETE FROM credit_holds WHERE id = ${lease.id} AND EXISTS (SELECT 1 FROM organization) RETURNING amount)
          UPDATE organizations SET ${sql(held)} = ${sql(held)} - ended.amount
          FROM ended WHERE organizations.id = ${lease.organizationId}`
      }, Effect.orDie),
      renew: Effect.fn("CreditsRepo.renew")(function*(ids, expiresAt) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          WITH locked AS (
            SELECT id FROM credit_holds WHERE ${sql.in("id", ids)} ORDER BY organization_id, id FOR UPDATE
          )
          UPDATE credit_holds SET expires_at = ${expiresAt} FROM locked WHERE credit_holds.id = locked.id
          RETURNING credit_holds.id`
        return rows.map((row) => row.id)
      }, Effect.orDie),
      expired: Effect.fn("CreditsRepo.expired")(function*(now, limit) {
        const rows = yield* sql<{ readonly id: string; readonly organization_id: string; readonly pool: CreditPool }>`
          SELECT id, organization_id, pool FROM credit_holds WHERE expires_at <= ${now}
          ORDER BY expires_at LIMIT ${limit}`
        return rows.map((row) => ({ id: row.id, organizationId: row.organization_id, pool: row.pool }))
      }, Effect.orDie)
    }
  }))
}
