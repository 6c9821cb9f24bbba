import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { selectPage, type Window } from "../storage/Windows.ts"

/** An AI persona of a company: scheduled tasks run as one. */
export interface EmployeeRecord {
  readonly id: string
  readonly companyId: string
  readonly name: string
  readonly role: string
  readonly instructions: string
  /** Null: the platform's default model. */
  readonly model: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface EmployeesRepository {
  readonly create: (employee: EmployeeRecord) => Effect.Effect<EmployeeRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<EmployeeRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<EmployeeRecord>; readonly total: number }>
}

export class EmployeesRepo extends Context.Service<EmployeesRepo, EmployeesRepository>()("agents/EmployeesRepo") {
  static readonly layer = Layer.effect(EmployeesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: Effect.fn("EmployeesRepo.create")(function*(employee) {
        const rows = yield* sql<EmployeeRow>`
          INSERT INTO employees (id, company_id, name, role, instructions, model, created_at, updated_at)
          VALUES (${employee.id}, ${employee.companyId}, ${employee.name}, ${employee.role}, ${employee.instructions},
            ${employee.model}, ${employee.createdAt}, ${employee.updatedAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("EmployeesRepo.get")(function*(companyId, id) {
        const rows = yield* sql<EmployeeRow>`SELECT * FROM employees WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      list: Effect.fn("EmployeesRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<EmployeeRow>(sql, "employees", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(fromRow), total: page.total }
      }, Effect.orDie)
    }
  }))
}

interface EmployeeRow {
  readonly id: string
  readonly company_id: string
  readonly name: string
  readonly role: string
  readonly instructions: string
  readonly model: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: EmployeeRow): EmployeeRecord => ({
  id: row.id,
  companyId: row.company_id,
  name: row.name,
  role: row.role,
  instructions: row.instructions,
  model: row.model,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
