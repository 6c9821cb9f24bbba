import type { SqlClient, Statement } from "effect/sql"

/**
 * The statements with which lease-claiming workers take their work: a batch
 * of due rows is picked and locked (`FOR UPDATE SKIP LOCKED`, so processes
 * claiming at once take disjoint rows), then leased to one token, in one
 * statement. The pick is `MATERIALIZED`: as an `IN (…)` subquery the planner
 * may run it again per row updated, each run skipping the rows the last one
 * locked, and the claim then takes more than its limit. Materialised, it runs
 * once: the rows it picks are exactly the ones taken.
 */

/** Which rows of `table` a pick takes: those `where` admits, in `orderBy` order, at most `limit`. */
export interface LockedPick {
  readonly table: string
  /** Tables the condition or the order reads besides `table` (`JOIN … ON …`); only `table`'s rows are locked. */
  readonly join?: Statement.Fragment | undefined
  readonly where?: Statement.Fragment | undefined
  readonly orderBy: Statement.Fragment
  readonly limit: number
}

/**
 * The CTE `picked AS MATERIALIZED (…)` with one column, `picked_id`: the ids
 * of the rows picked, locked until the transaction ends. A statement joins
 * it on `<table>.id = picked.picked_id` (the column's name leaves `id`
 * unambiguous in the statement's SET, WHERE and RETURNING).
 */
export const lockedPick = (sql: SqlClient.SqlClient, pick: LockedPick): Statement.Fragment => {
  const table = sql(pick.table)
  return sql`picked AS MATERIALIZED (
    SELECT ${table}.id AS picked_id FROM ${table} ${pick.join ?? sql``}
    ${pick.where === undefined ? sql`` : sql`WHERE ${pick.where}`}
    ORDER BY ${pick.orderBy} LIMIT ${pick.limit}
    FOR UPDATE OF ${table} SKIP LOCKED
  )`
}

/** A claim: the rows picked are leased to `lease.token` until `lease.until`. */
export interface LeasedClaim extends LockedPick {
  /** Which rows are due; it says, too, that no unexpired lease holds them (each table words its lease). */
  readonly where: Statement.Fragment
  readonly lease: {
    readonly token: string
    readonly until: Date
    /** The column holding the lease's expiry. */
    readonly untilColumn?: "lease_expires_at" | "lease_until" | undefined
  }
  readonly update?: {
    /** Assignments besides the lease's (`attempts = attempts + 1`). */
    readonly set?: Statement.Fragment | undefined
    /** Tables the update reads besides the claimed one (for what it returns), joined by `where`. */
    readonly from?: Statement.Fragment | undefined
    /** What a picked row must meet to be leased, besides being picked. */
    readonly where?: Statement.Fragment | undefined
  } | undefined
  /** The RETURNING list: what the claim answers of each row leased. */
  readonly returning: Statement.Fragment
}

/**
 * `WITH picked AS MATERIALIZED (…) UPDATE <table> SET lease_token, <lease
 * expiry>[, set] FROM picked[, from] WHERE <table>.id = picked.picked_id
 * [AND where] RETURNING returning`: the claim, as one statement.
 */
export const leasedClaim = <Row extends object = object>(sql: SqlClient.SqlClient, claim: LeasedClaim): Statement.Statement<Row> => {
  const table = sql(claim.table)
  const { set, from, where } = claim.update ?? {}
  return sql<Row>`WITH ${lockedPick(sql, claim)}
    UPDATE ${table} SET lease_token = ${claim.lease.token},
      ${sql(claim.lease.untilColumn ?? "lease_expires_at")} = ${claim.lease.until}${set === undefined ? sql`` : sql`, ${set}`}
    FROM picked${from === undefined ? sql`` : sql`, ${from}`}
    WHERE ${table}.id = picked.picked_id${where === undefined ? sql`` : sql` AND (${where})`}
    RETURNING ${claim.returning}`
}
