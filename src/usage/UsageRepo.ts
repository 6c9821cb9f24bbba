import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { toNumber } from "../storage/Rows.ts"

export interface UsageEvent {
  readonly id: string
  readonly organizationId: string
  readonly companyId: string | null
  readonly userId: string | null
  readonly feature: string
  readonly model: string
  readonly credits: number
  readonly tokens: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly createdAt: Date
}

export type NewUsageEvent = Omit<UsageEvent, "id" | "createdAt">

/** The two balances an organization holds. */
export type CreditPool = "credits" | "data"

export interface UsageFilter {
  readonly startDate?: Date | undefined
  readonly endDate?: Date | undefined
  readonly userId?: string | undefined
  readonly featureKey?: string | undefined
}

export interface UsageTotals {
  readonly credits: number
  readonly tokens: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly requests: number
}

export interface UsageRow {
  readonly model: string
  readonly feature: string
  readonly credits: number
  readonly tokens: number
  readonly requests: number
}

export interface UsageSummary {
  readonly totals: UsageTotals
  readonly byModel: ReadonlyArray<UsageRow>
  readonly byFeature: ReadonlyArray<UsageRow>
}

export interface Window {
  readonly offset: number
  readonly limit: number
}

/** The usage ledger (what `CreditsRepo.settle` records), read by the usage endpoints. */
export interface UsageRepository {
  /** Totals over every matching event; `window` pages the rows, ordered by credits descending. */
  readonly summary: (organizationId: string, filter: UsageFilter, window: Window) => Effect.Effect<UsageSummary>
  /** Matching events, newest first. */
  readonly history: (
    organizationId: string,
    filter: UsageFilter,
    window: Window
  ) => Effect.Effect<{ readonly events: ReadonlyArray<UsageEvent>; readonly total: number }>
}

export class UsageRepo extends Context.Service<UsageRepo, UsageRepository>()("usage/UsageRepo") {
  static readonly layer = Layer.effect(UsageRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const where = (organizationId: string, filter: UsageFilter) =>
      sql.and([
        sql`organization_id = ${organizationId}`,
        ...(filter.startDate ? [sql`created_at >= ${filter.startDate}`] : []),
        // Inclusive to the millisecond the API shows: stored times carry microseconds.
        ...(filter.endDate ? [sql`created_at < ${new Date(filter.endDate.getTime() + 1)}`] : []),
        ...(filter.userId ? [sql`user_id = ${filter.userId}`] : []),
        ...(filter.featureKey ? [sql`feature = ${filter.featureKey}`] : [])
      ])
    const grouped = (organizationId: string, filter: UsageFilter, window: Window, key: "model" | "feature") =>
      Effect.map(
        sql<{ readonly key: string; readonly credits: unknown; readonly tokens: unknown; readonly requests: unknown }>`
          SELECT ${sql(key)} AS key, sum(credits) AS credits, sum(tokens) AS tokens, count(*) AS requests
          FROM usage_events WHERE ${where(organizationId, filter)}
          GROUP BY ${sql(key)} ORDER BY sum(credits) DESC, ${sql(key)}
          LIMIT ${window.limit} OFFSET ${window.offset}`,
        (rows) =>
          rows.map((row): UsageRow => ({
            model: key === "model" ? row.key : "",
            feature: key === "feature" ? row.key : "",
            credits: toNumber(row.credits),
            tokens: toNumber(row.tokens),
            requests: toNumber(row.requests)
          }))
      )
    return {
      summary: Effect.fn("UsageRepo.summary")(function*(organizationId, filter, window) {
        const [totals, byModel, byFeature] = yield* Effect.all([
          sql<Record<"credits" | "tokens" | "input_tokens" | "output_tokens" | "requests", unknown>>`
            SELECT coalesce(sum(credits), 0) AS credits, coalesce(sum(tokens), 0) AS tokens,
              coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens,
              count(*) AS requests
            FROM usage_events WHERE ${where(organizationId, filter)}`,
          grouped(organizationId, filter, window, "model"),
          grouped(organizationId, filter, window, "feature")
        ])
        const row = totals[0]
        return {
          totals: {
            credits: toNumber(row.credits),
            tokens: toNumber(row.tokens),
            inputTokens: toNumber(row.input_tokens),
            outputTokens: toNumber(row.output_tokens),
            requests: toNumber(row.requests)
          },
          byModel,
          byFeature
        }
      }, Effect.orDie),
      history: Effect.fn("UsageRepo.history")(function*(organizationId, filter, window) {
        const [rows, count] = yield* Effect.all([
          sql<UsageEventRow>`SELECT * FROM usage_events WHERE ${where(organizationId, filter)}
            ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
          sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM usage_events WHERE ${where(organizationId, filter)}`
        ])
        return { events: rows.map(eventFromRow), total: toNumber(count[0].count) }
      }, Effect.orDie)
    }
  }))
}

interface UsageEventRow {
  readonly id: string
  readonly organization_id: string
  readonly company_id: string | null
  readonly user_id: string | null
  readonly feature: string
  readonly model: string
  readonly credits: unknown
  readonly tokens: unknown
  readonly input_tokens: unknown
  readonly output_tokens: unknown
  readonly created_at: Date
}

const eventFromRow = (row: UsageEventRow): UsageEvent => ({
  id: row.id,
  organizationId: row.organization_id,
  companyId: row.company_id,
  userId: row.user_id,
  feature: row.feature,
  model: row.model,
  credits: toNumber(row.credits),
  tokens: toNumber(row.tokens),
  inputTokens: toNumber(row.input_tokens),
  outputTokens: toNumber(row.output_tokens),
  createdAt: new Date(row.created_at)
})
