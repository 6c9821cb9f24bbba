import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { organizationsTable } from "../organizations/OrganizationsRepo.ts"
import { newId } from "../platform/Ids.ts"
import { MemoryStore, memoryTable } from "../storage/MemoryStore.ts"
import { toNumber } from "../storage/Rows.ts"
import { type CreditPool, type NewUsageEvent, usageTable } from "./UsageRepo.ts"

/** Credits held for a call in flight, until it settles or expires. */
export interface HoldRecord {
  readonly id: string
  readonly organizationId: string
  readonly pool: CreditPool
  readonly amount: number
  readonly expiresAt: Date
}

export type HoldKey = Pick<HoldRecord, "id" | "organizationId" | "pool">

/** The organization balances' ledger: holds, their settlement and their expiry. */
export interface CreditsRepository {
  /**
   * Holds `amount` of the pool when usage + everything held + `amount` stays
   * within the limit, in one conditional write; false, and nothing written,
   * when it does not fit.
   */
  readonly hold: (hold: HoldRecord) => Effect.Effect<boolean>
  /**
   * Ends the hold (when it still exists: the sweeper may have released it)
   * and debits `cost`: up to the held amount plus whatever the pool still has
   * free, never past the limit. Records `event` with the credits debited,
   * atomically; without an event nothing is recorded (a release). Answers the
   * credits debited.
   */
  readonly settle: (
    hold: HoldKey,
    cost: number,
    event: Omit<NewUsageEvent, "credits"> | undefined
  ) => Effect.Effect<number>
  /** Moves the expiry of the given holds (a live process keeping its calls' holds). */
  readonly renew: (ids: ReadonlyArray<string>, expiresAt: Date) => Effect.Effect<void>
  /** Up to `limit` holds expired at `now`, oldest first. */
  readonly expired: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<HoldKey>>
}

const columnsOf = (pool: CreditPool) =>
  pool === "credits"
    ? { limit: "credit_limit", usage: "credit_usage", held: "credit_held" }
    : { limit: "data_credit_limit", usage: "data_credit_usage", held: "data_credit_held" }

/** The memory backend's holds and each organization's held totals (see `MemoryStore`). */
export const holdsTable = memoryTable("credit_holds", (): Map<string, HoldRecord> => new Map())
const heldTable = memoryTable("credit_held", (): Map<string, number> => new Map())

const heldKey = (organizationId: string, pool: CreditPool) => `${pool}:${organizationId}`

export class CreditsRepo extends Context.Service<CreditsRepo, CreditsRepository>()("usage/CreditsRepo") {
  static readonly sql = Layer.effect(CreditsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      hold: Effect.fn("CreditsRepo.hold")(function*(hold) {
        const { limit, usage, held } = columnsOf(hold.pool)
        const rows = yield* sql`
          WITH reserved AS (
            UPDATE organizations SET ${sql(held)} = ${sql(held)} + ${hold.amount}::bigint
            WHERE id = ${hold.organizationId} AND ${sql(usage)} + ${sql(held)} + ${hold.amount}::bigint <= ${sql(limit)}
            RETURNING id
          )
          INSERT INTO credit_holds (id, organization_id, pool, amount, expires_at)
          SELECT ${hold.id}, id, ${hold.pool}, ${hold.amount}::bigint, ${hold.expiresAt} FROM reserved
          RETURNING id`
        return rows.length === 1
      }, Effect.orDie),
      settle: Effect.fn("CreditsRepo.settle")(function*(hold, cost, event) {
        const { limit, usage, held } = columnsOf(hold.pool)
        // One statement: the hold row is deleted at most once (a concurrent
        // settle or sweep finds it gone and frees nothing), and the locked
        // organization row gives the balance the debit is bounded by.
        const settled = sql`
          WITH released AS (
            DELETE FROM credit_holds WHERE id = ${hold.id} RETURNING amount
          ), before AS (
            SELECT ${sql(usage)} AS used, ${sql(held)} AS held, ${sql(limit)} AS lim
            FROM organizations WHERE id = ${hold.organizationId} FOR UPDATE
          ), debit AS (
            SELECT coalesce((SELECT amount FROM released), 0) AS freed,
              least(${cost}::bigint, coalesce((SELECT amount FROM released), 0) + greatest(lim - used - held, 0)) AS credits
            FROM before
          ), updated AS (
            UPDATE organizations SET ${sql(usage)} = ${sql(usage)} + debit.credits, ${sql(held)} = ${sql(held)} - debit.freed
            FROM debit WHERE organizations.id = ${hold.organizationId}
            RETURNING debit.credits
          )`
        if (event === undefined) {
          const rows = yield* sql<{ readonly credits: unknown }>`${settled} SELECT credits FROM updated`
          return rows.length === 0 ? 0 : toNumber(rows[0].credits)
        }
        const rows = yield* sql<{ readonly credits: unknown }>`${settled}
          INSERT INTO usage_events (id, organization_id, company_id, user_id, feature, model, credits, tokens, input_tokens, output_tokens)
          SELECT ${newId("use")}, ${event.organizationId}, ${event.companyId}, ${event.userId}, ${event.feature}, ${event.model},
            credits, ${event.tokens}, ${event.inputTokens}, ${event.outputTokens}
          FROM updated
          RETURNING credits`
        return rows.length === 0 ? 0 : toNumber(rows[0].credits)
      }, Effect.orDie),
      renew: Effect.fn("CreditsRepo.renew")(function*(ids, expiresAt) {
        if (ids.length === 0) return
        yield* sql`UPDATE credit_holds SET expires_at = ${expiresAt} WHERE ${sql.in("id", ids)}`
      }, Effect.orDie),
      expired: Effect.fn("CreditsRepo.expired")(function*(now, limit) {
        const rows = yield* sql<{ readonly id: string; readonly organization_id: string; readonly pool: CreditPool }>`
          SELECT id, organization_id, pool FROM credit_holds WHERE expires_at <= ${now}
          ORDER BY expires_at LIMIT ${limit}`
        return rows.map((row) => ({ id: row.id, organizationId: row.organization_id, pool: row.pool }))
      }, Effect.orDie)
    }
  }))

  /**
   * The embedded database serves one process (its data folder is locked), so
   * holds live in this process's memory: a hold reads the balance instead of
   * writing, a release writes nothing, a settlement writes the debit and its
   * event. A settlement here never debits beyond its hold. A crash loses the
   * holds with the process; they reserved nothing durable, so none expires.
   */
  static readonly local = Layer.effect(CreditsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holds = new Map<string, HoldRecord>()
    const held = new Map<string, number>()
    // What this process debited so far, per balance: a hold adds what was debited while it read the
    // balance, which its read may not show yet (counted twice at worst: never too little).
    const debited = new Map<string, number>()
    const valueOf = (totals: Map<string, number>, key: string) => totals.get(key) ?? 0
    const repository: CreditsRepository = {
      hold: (hold) =>
        Effect.suspend(() => {
          const key = heldKey(hold.organizationId, hold.pool)
          const debitedBefore = valueOf(debited, key)
          const { limit, usage } = columnsOf(hold.pool)
          return Effect.map(
            sql<{ readonly used: unknown; readonly lim: unknown }>`
              SELECT ${sql(usage)} AS used, ${sql(limit)} AS lim FROM organizations WHERE id = ${hold.organizationId}`,
            (rows) => {
              if (rows.length === 0) return false
              const used = toNumber(rows[0].used) + valueOf(debited, key) - debitedBefore
              if (used + valueOf(held, key) + hold.amount > toNumber(rows[0].lim)) return false
              holds.set(hold.id, hold)
              held.set(key, valueOf(held, key) + hold.amount)
              return true
            }
          )
        }).pipe(Effect.orDie),
      settle: (hold, cost, event) =>
        Effect.suspend(() => {
          const key = heldKey(hold.organizationId, hold.pool)
          const freed = holds.get(hold.id)?.amount ?? 0
          const credits = Math.min(cost, freed)
          const { usage } = columnsOf(hold.pool)
          const debit = sql`UPDATE organizations SET ${sql(usage)} = ${sql(usage)} + ${credits}::bigint
            WHERE id = ${hold.organizationId} RETURNING id`
          const write: Effect.Effect<unknown, unknown> = event === undefined
            ? credits === 0 ? Effect.void : debit
            : sql`WITH updated AS (${debit})
              INSERT INTO usage_events (id, organization_id, company_id, user_id, feature, model, credits, tokens, input_tokens, output_tokens)
              SELECT ${newId("use")}, ${event.organizationId}, ${event.companyId}, ${event.userId}, ${event.feature}, ${event.model},
                ${credits}::bigint, ${event.tokens}, ${event.inputTokens}, ${event.outputTokens}
              FROM updated`
          return Effect.map(write, () => {
            holds.delete(hold.id)
            held.set(key, valueOf(held, key) - freed)
            debited.set(key, valueOf(debited, key) + credits)
            return credits
          })
        }).pipe(Effect.orDie),
      renew: () => Effect.void,
      expired: () => Effect.succeed([])
    }
    return repository
  }))

  static readonly memory = Layer.effect(CreditsRepo, MemoryStore.useSync((store): CreditsRepository => ({
    hold: (hold) =>
      store.write((tables) => {
        const organization = tables(organizationsTable).get(hold.organizationId)
        if (organization === undefined) return false
        const held = tables(heldTable)
        const key = heldKey(hold.organizationId, hold.pool)
        const [limit, usage] = hold.pool === "credits"
          ? [organization.creditLimit, organization.creditUsage]
          : [organization.dataCreditLimit, organization.dataCreditUsage]
        const heldBefore = held.get(key) ?? 0
        if (usage + heldBefore + hold.amount > limit) return false
        held.set(key, heldBefore + hold.amount)
        tables(holdsTable).set(hold.id, hold)
        return true
      }),
    settle: (hold, cost, event) =>
      store.write((tables) => {
        const freed = tables(holdsTable).get(hold.id)?.amount ?? 0
        tables(holdsTable).delete(hold.id)
        const organization = tables(organizationsTable).get(hold.organizationId)
        if (organization === undefined) return 0
        const held = tables(heldTable)
        const key = heldKey(hold.organizationId, hold.pool)
        const heldBefore = held.get(key) ?? 0
        const [limit, usage] = hold.pool === "credits"
          ? [organization.creditLimit, organization.creditUsage]
          : [organization.dataCreditLimit, organization.dataCreditUsage]
        const credits = Math.min(cost, freed + Math.max(limit - usage - heldBefore, 0))
        held.set(key, heldBefore - freed)
        tables(organizationsTable).set(
          organization.id,
          hold.pool === "credits"
            ? { ...organization, creditUsage: usage + credits }
            : { ...organization, dataCreditUsage: usage + credits }
        )
        if (event !== undefined) tables(usageTable).push({ ...event, credits, id: newId("use"), createdAt: new Date() })
        return credits
      }),
    renew: (ids, expiresAt) =>
      store.write((tables) => {
        const holds = tables(holdsTable)
        for (const id of ids) {
          const hold = holds.get(id)
          if (hold !== undefined) holds.set(id, { ...hold, expiresAt })
        }
      }),
    expired: (now, limit) =>
      store.read((tables) =>
        [...tables(holdsTable).values()]
          .filter((hold) => hold.expiresAt.getTime() <= now.getTime())
          .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
          .slice(0, limit)
          .map(({ id, organizationId, pool }) => ({ id, organizationId, pool }))
      )
  })))
}
