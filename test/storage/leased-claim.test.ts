import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { leasedClaim } from "../../src/storage/LeasedClaim.ts"
import { backends } from "../support/TestServer.ts"

interface Job {
  readonly id: string
  readonly owner: string
  readonly due_at: Date
  readonly lease_token: string | null
  readonly lease_until: Date | null
  readonly attempts: number
}

const now = new Date("2025-01-01T12:00:00.000Z")
const later = new Date("2025-01-01T12:05:00.000Z")
const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000)

/** A table of jobs (and their owners) made for the test and dropped after it. */
const withJobs = <A, E, R>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.acquireUseRelease(
      Effect.gen(function*() {
        yield* sql`CREATE TABLE claim_owners (id text PRIMARY KEY, active boolean NOT NULL)`
        yield* sql`CREATE TABLE claim_jobs (id text PRIMARY KEY, owner text NOT NULL REFERENCES claim_owners (id),
          due_at timestamptz NOT NULL, lease_token text, lease_until timestamptz, attempts integer NOT NULL)`
        yield* sql`INSERT INTO claim_owners VALUES ('on', true), ('off', false)`
        yield* sql`INSERT INTO claim_jobs (id, owner, due_at, attempts) VALUES
          ('a', 'on', ${at(-1)}, 0), ('b', 'on', ${at(-3)}, 0), ('c', 'on', ${at(-2)}, 0),
          ('d', 'off', ${at(-4)}, 0), ('e', 'on', ${at(1)}, 0)`
      }),
      () => use(sql),
      () => Effect.orDie(sql`DROP TABLE claim_jobs, claim_owners`)
    ))

const claim = (sql: SqlClient.SqlClient, token: string, limit: number) =>
  leasedClaim<Job & { readonly active: boolean }>(sql, {
      lease: { token, until: later, untilColumn: "lease_until" },
      table: "claim_jobs",
      limit,
      orderBy: sql`claim_jobs.due_at`,
      join: sql`JOIN claim_owners ON claim_owners.id = claim_jobs.owner`,
      where: sql`claim_owners.active AND claim_jobs.due_at <= ${now}
        AND (claim_jobs.lease_until IS NULL OR claim_jobs.lease_until < ${now})`,
      update: { set: sql`attempts = claim_jobs.attempts + 1`, from: sql`claim_owners`, where: sql`claim_owners.id = claim_jobs.owner` },
      returning: sql`claim_jobs.*, claim_owners.active`
    }).pipe(Effect.map((jobs) => jobs.toSorted((a, b) => a.id.localeCompare(b.id))))

describe.each(backends)("the leased claim on $name", ({ storage }) => {
  it.layer(storage)((it) => {
    it.effect("leases at most the limit of the due rows, in order, with the extra assignments, answering what is asked", () =>
      withJobs((sql) =>
        Effect.gen(function*() {
          const first = yield* claim(sql, "one", 2)
          expect(first.map((job) => [job.id, job.lease_token, job.attempts, job.active])).toEqual([
            ["b", "one", 1, true],
            ["c", "one", 1, true]
          ])
          expect(first.every((job) => job.lease_until?.getTime() === later.getTime())).toBe(true)
          // Leased rows are no longer due; an inactive owner's and a future row never are.
          expect((yield* claim(sql, "two", 10)).map((job) => job.id)).toEqual(["a"])
          expect(yield* claim(sql, "three", 10)).toEqual([])
          const rows = yield* sql<Pick<Job, "id" | "lease_token">>`SELECT id, lease_token FROM claim_jobs ORDER BY id`
          expect(rows).toEqual([
            { id: "a", lease_token: "two" },
            { id: "b", lease_token: "one" },
            { id: "c", lease_token: "one" },
            { id: "d", lease_token: null },
            { id: "e", lease_token: null }
          ])
        })
      ))

    it.effect("claims made at once take disjoint rows, never more than their limits", () =>
      withJobs((sql) =>
        Effect.gen(function*() {
          const claims = yield* Effect.all([claim(sql, "x", 1), claim(sql, "y", 1), claim(sql, "z", 1)], { concurrency: "unbounded" })
          expect(claims.map((rows) => rows.length)).toEqual([1, 1, 1])
          expect(claims.flatMap((rows) => rows.map((job) => job.id)).sort()).toEqual(["a", "b", "c"])
        })
      ))
  })
})
