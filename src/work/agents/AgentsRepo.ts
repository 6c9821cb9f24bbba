import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, InCompany, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { AgentToolName } from "./ToolNames.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const AgentRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  /** Null: the platform's default model. */
  model: Schema.NullOr(Schema.String),
  /** The tools it may use in conversations; null: every tool (agents/AgentTools.ts). */
  tools: Schema.NullOr(Schema.Array(AgentToolName)),
  status: Schema.Literals(["active", "paused", "archived"]),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type AgentRecord = typeof AgentRecord.Type
export type AgentStatus = AgentRecord["status"]

export interface AgentChange {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly instructions?: string | undefined
  /** Null resets to the default model. */
  readonly model?: string | null | undefined
  /** Null goes back to every tool. */
  readonly tools?: ReadonlyArray<string> | null | undefined
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

const AgentRow = fromColumns(AgentRecord)

export class AgentsRepo extends Context.Service<AgentsRepo, AgentsRepository>()("agents/AgentsRepo") {
  static readonly layer = Layer.effect(AgentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.findOne({
      Request: AgentRow,
      Result: AgentRow,
      execute: (row) =>
        sql`INSERT INTO agents (id, company_id, name, description, instructions, model, tools, status, created_at, updated_at)
          VALUES (${row.id}, ${row.company_id}, ${row.name}, ${row.description}, ${row.instructions}, ${row.model},
            ${row.tools === null ? null : jsonParam(row.tools)}::jsonb, ${row.status}, ${row.created_at}, ${row.updated_at})
          RETURNING *`
    })
    const byId = SqlSchema.findOneOption({
      Request: InCompany,
      Result: AgentRow,
      execute: ({ companyId, id }) => sql`SELECT * FROM agents WHERE company_id = ${companyId} AND id = ${id}`
    })
    const rows = readerOf(AgentRow)
    return {
      create: Effect.fn("AgentsRepo.create")((agent: AgentRecord) => insert(agent), Effect.orDie),
      get: Effect.fn("AgentsRepo.get")((companyId: string, id: string) => byId({ companyId, id }), Effect.orDie),
      list: Effect.fn("AgentsRepo.list")(
        (companyId: string, window: Window) => selectRecords(AgentRow, sql, "agents", sql`company_id = ${companyId}`, window),
        Effect.orDie
      ),
      update: Effect.fn("AgentsRepo.update")(function*(companyId, id, change, now) {
        return yield* rows.first(sql`
          UPDATE agents SET
            name = coalesce(${change.name ?? null}, name),
            description = coalesce(${change.description ?? null}, description),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            model = ${change.model === undefined ? sql`model` : sql`${change.model}`},
            tools = ${change.tools === undefined ? sql`tools` : sql`${change.tools === null ? null : jsonParam(change.tools)}::jsonb`},
            status = coalesce(${change.status ?? null}, status),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
