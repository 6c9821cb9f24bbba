import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { selectPage, type Window } from "../storage/Windows.ts"

export type AgentStatus = "active" | "paused" | "archived"

export interface AgentRecord {
  readonly id: string
  readonly companyId: string
  readonly name: string
  readonly description: string
  readonly instructions: string
  /** Null: the platform's default model. */
  readonly model: string | null
  readonly status: AgentStatus
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface AgentChange {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly instructions?: string | undefined
  /** Null resets to the default model. */
  readonly model?: string | null | undefined
  readonly status?: AgentStatus | undefined
}

export interface AgentsRepository {
  readonly create: (agent: AgentRecord) => Effect.Effect<AgentRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<AgentRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<AgentRecord>; readonly total: number }>
  readonly update: (
    companyId: string,
    id: string,
    change: AgentChange,
    now: Date
  ) => Effect.Effect<Option.Option<AgentRecord>>
}

export class AgentsRepo extends Context.Service<AgentsRepo, AgentsRepository>()("agents/AgentsRepo") {
  static readonly layer = Layer.effect(AgentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: Effect.fn("AgentsRepo.create")(function*(agent) {
        const rows = yield* sql<AgentRow>`
          INSERT INTO agents (id, company_id, name, description, instructions, model, status, created_at, updated_at)
          VALUES (${agent.id}, ${agent.companyId}, ${agent.name}, ${agent.description}, ${agent.instructions},
            ${agent.model}, ${agent.status}, ${agent.createdAt}, ${agent.updatedAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("AgentsRepo.get")(function*(companyId, id) {
        const rows = yield* sql<AgentRow>`SELECT * FROM agents WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      list: Effect.fn("AgentsRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<AgentRow>(sql, "agents", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(fromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("AgentsRepo.update")(function*(companyId, id, change, now) {
        const rows = yield* sql<AgentRow>`
          UPDATE agents SET
            name = coalesce(${change.name ?? null}, name),
            description = coalesce(${change.description ?? null}, description),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            model = ${change.model === undefined ? sql`model` : sql`${change.model}`},
            status = coalesce(${change.status ?? null}, status),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie)
    }
  }))
}

interface AgentRow {
  readonly id: string
  readonly company_id: string
  readonly name: string
  readonly description: string
  readonly instructions: string
  readonly model: string | null
  readonly status: AgentStatus
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: AgentRow): AgentRecord => ({
  id: row.id,
  companyId: row.company_id,
  name: row.name,
  description: row.description,
  instructions: row.instructions,
  model: row.model,
  status: row.status,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
