import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, InCompany, readerOf, Timestamp } from "../../storage/Columns.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

/** An AI persona of a company: scheduled tasks run as one. */
export const EmployeeRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  role: Schema.String,
  instructions: Schema.String,
  /** Null: the platform's default model. */
  model: Schema.NullOr(Schema.String),
  /** Null: in no department. */
  departmentId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type EmployeeRecord = typeof EmployeeRecord.Type

export interface EmployeeChange {
  readonly name?: string | undefined
  readonly role?: string | undefined
  readonly instructions?: string | undefined
  /** Null resets to the default model. */
  readonly model?: string | null | undefined
  /** Null takes the employee out of its department. */
  readonly departmentId?: string | null | undefined
}

export interface EmployeesRepository {
  readonly create: (employee: EmployeeRecord) => Effect.Effect<EmployeeRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<EmployeeRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<EmployeeRecord>; readonly total: number }>
  /** Applies the supplied fields; `updatedAt` becomes `now`, and always moves forward. */
  readonly update: (
    companyId: string,
    id: string,
    change: EmployeeChange,
    now: Date
  ) => Effect.Effect<Option.Option<EmployeeRecord>>
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
    const rows = readerOf(EmployeeRow)
    const keptOr = (value: string | null | undefined, column: string) =>
      value === undefined ? sql`${sql(column)}` : sql`${value}`
    return {
      create: Effect.fn("EmployeesRepo.create")((employee: EmployeeRecord) => insert(employee), Effect.orDie),
      get: Effect.fn("EmployeesRepo.get")((companyId: string, id: string) => byId({ companyId, id }), Effect.orDie),
      list: Effect.fn("EmployeesRepo.list")(
        (companyId: string, window: Window) =>
          selectRecords(EmployeeRow, sql, "employees", sql`company_id = ${companyId}`, window),
        Effect.orDie
      ),
      update: Effect.fn("EmployeesRepo.update")(function*(companyId, id, change, now) {
        return yield* rows.first(sql`
          UPDATE employees SET
            name = coalesce(${change.name ?? null}, name),
            role = coalesce(${change.role ?? null}, role),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            model = ${keptOr(change.model, "model")},
            department_id = ${keptOr(change.departmentId, "department_id")},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
