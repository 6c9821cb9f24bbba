import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, InCompany, Timestamp } from "../storage/Columns.ts"
import { selectRecords, type Window } from "../storage/Windows.ts"

/** An AI persona of a company: scheduled tasks run as one. */
export const EmployeeRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  role: Schema.String,
  instructions: Schema.String,
  /** Null: the platform's default model. */
  model: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type EmployeeRecord = typeof EmployeeRecord.Type

export interface EmployeesRepository {
  readonly create: (employee: EmployeeRecord) => Effect.Effect<EmployeeRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<EmployeeRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<EmployeeRecord>; readonly total: number }>
}

const EmployeeRow = fromColumns(EmployeeRecord)

export class EmployeesRepo extends Context.Service<EmployeesRepo, EmployeesRepository>()("agents/EmployeesRepo") {
  static readonly layer = Layer.effect(EmployeesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.findOne({
      Request: EmployeeRow,
      Result: EmployeeRow,
      execute: (row) => sql`INSERT INTO employees ${sql.insert(row)} RETURNING *`
    })
    const byId = SqlSchema.findOneOption({
      Request: InCompany,
      Result: EmployeeRow,
      execute: ({ companyId, id }) => sql`SELECT * FROM employees WHERE company_id = ${companyId} AND id = ${id}`
    })
    return {
      create: Effect.fn("EmployeesRepo.create")((employee: EmployeeRecord) => insert(employee), Effect.orDie),
      get: Effect.fn("EmployeesRepo.get")((companyId: string, id: string) => byId({ companyId, id }), Effect.orDie),
      list: Effect.fn("EmployeesRepo.list")(
        (companyId: string, window: Window) =>
          selectRecords(EmployeeRow, sql, "employees", sql`company_id = ${companyId}`, window),
        Effect.orDie
      )
    }
  }))
}
