import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { emit, emitAll } from "../../src/storage/Outbox.ts"
import { backends, seedTenant } from "../support/TestServer.ts"

const outboxOf = (companyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly type: string; readonly payload: unknown }>`SELECT type, payload FROM event_outbox
      WHERE company_id = ${companyId} ORDER BY id`)

describe.each(backends)("the event outbox on $name", ({ storage }) => {
  it.layer(storage)((it) => {
    it.effect("an event emitted in a transaction that rolls back is never recorded", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        const failed = yield* sql.withTransaction(Effect.gen(function*() {
          yield* emit(tenant.companyId, "lead.created", { leadId: "lead_1" })
          return yield* Effect.fail("the change failed")
        })).pipe(Effect.exit)
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* outboxOf(tenant.companyId)).toEqual([])
      }))

    it.effect("events emitted with a committed change are recorded with it, in order", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* emit(tenant.companyId, "lead.created", { leadId: "lead_1" })
          yield* emitAll([
            { companyId: tenant.companyId, type: "recipient.opened", payload: { recipientId: "rcp_1" } },
            { companyId: tenant.companyId, type: "recipient.clicked", payload: { recipientId: "rcp_1", url: "https://example.com/" } }
          ])
        }))
        expect(yield* outboxOf(tenant.companyId)).toEqual([
          { type: "lead.created", payload: { leadId: "lead_1" } },
          { type: "recipient.opened", payload: { recipientId: "rcp_1" } },
          { type: "recipient.clicked", payload: { recipientId: "rcp_1", url: "https://example.com/" } }
        ])
      }))
  })
})
