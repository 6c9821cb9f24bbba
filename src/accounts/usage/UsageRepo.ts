import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { toNumber } from "../../storage/Rows.ts"

export const UsageEvent = Schema.Struct({
  id: Schema.String,
  organizationId: Schema.String,
  companyId: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  feature: Schema.String,
  model: Schema.String,
  /** The balance the credits came from: model and feature credits, or data credits (searches). */
  pool: Schema.Literals(["credits", "data"]),
  credits: NumberColumn,
  tokens: NumberColumn,
  inputTokens: NumberColumn,
  outputTokens: NumberColumn,
  createdAt: Timestamp
})
export type UsageEvent = typeof UsageEvent.Type

/** An event as a call records it; the pool is its lease's. */
export type NewUsageEvent = Omit<UsageEvent, "id" | "createdAt" | "pool">

/** The two balances an organization holds. */
export type CreditPool = UsageEvent["pool"]

export interface UsageFilter {
  readonly startDate?: Date | undefined
  readonly endDate?: Date | undefined
  readonly userId?: string | undefined
  readonly featureKey?: string | undefined
}

export const UsageTotals = Schema.Struct({
  credits: NumberColumn,
  dataCredits: NumberColumn,
  tokens: NumberColumn,
  inputTokens: NumberColumn,
  outputTokens: NumberColumn,
  requests: NumberColumn
})
export type UsageTotals = typeof UsageTotals.Type

export interface UsageRow {
  readonly model: string
  readonly feature: string
  readonly credits: number
  readonly dataCredits: number
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
  /** Totals over every matching event; `window` pages the rows, ordered by credits, then data credits, descending. */
  readonly summary: (organizationId: string, filter: UsageFilter, window: Window) => Effect.Effect<UsageSummary>
  /** Matching events, newest first. */
  readonly history: (
    organizationId: string,
    filter: UsageFilter,
    window: Window
  ) => Effect.Effect<{ readonly events: ReadonlyArray<UsageEvent>; readonly total: number }>
}

const UsageEventRow = fromColumns(UsageEvent)
const TotalsRow = fromColumns(UsageTotals)
/** One group of a breakdown: by model or by feature. */
const GroupRow = fromColumns(Schema.Struct({
  key: Schema.String,
  credits: NumberColumn,
  dataCredits: NumberColumn,
  tokens: NumberColumn,
  requests: NumberColumn
}))
/** Credits and data credits summed apart: the two balances are not one currency. */
const poolSums = `coalesce(sum(credits) FILTER (WHERE pool = 'credits'), 0) AS credits,
  coalesce(sum(credits) FILTER (WHERE pool = 'data'), 0) AS data_credits`

export class UsageRepo extends Context.Service<UsageRepo, UsageRepository>()("usage/UsageRepo") {
  static readonly layer = Layer.effect(UsageRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = readerOf(UsageEventRow)
    const totalsRows = readerOf(TotalsRow)
    const groups = readerOf(GroupRow)
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
        groups.all(sql`
          SELECT ${sql(key)} AS key, ${sql.literal(poolSums)}, sum(tokens) AS tokens, count(*) AS requests
          FROM usage_events WHERE ${where(organizationId, filter)}
          GROUP BY ${sql(key)} ORDER BY credits DESC, data_credits DESC, ${sql(key)}
          LIMIT ${window.limit} OFFSET ${window.offset}`),
        (rows) =>
          rows.map(({ key: value, ...sums }): UsageRow => ({
            model: key === "model" ? value : "",
            feature: key === "feature" ? value : "",
            ...sums
          }))
      )
    return {
      summary: Effect.fn("UsageRepo.summary")(function*(organizationId, filter, window) {
        const [totals, byModel, byFeature] = yield* Effect.all([
          totalsRows.one(sql`
            SELECT ${sql.literal(poolSums)}, coalesce(sum(tokens), 0) AS tokens,
              coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens,
              count(*) AS requests
            FROM usage_events WHERE ${where(organizationId, filter)}`),
          grouped(organizationId, filter, window, "model"),
          grouped(organizationId, filter, window, "feature")
        ])
        return { totals, byModel, byFeature }
      }, Effect.orDie),
      history: Effect.fn("UsageRepo.history")(function*(organizationId, filter, window) {
        const [rows, count] = yield* Effect.all([
          events.all(sql`SELECT * FROM usage_events WHERE ${where(organizationId, filter)}
            ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`),
          sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM usage_events WHERE ${where(organizationId, filter)}`
        ])
        return { events: rows, total: toNumber(count[0].count) }
      }, Effect.orDie)
    }
  }))
}
