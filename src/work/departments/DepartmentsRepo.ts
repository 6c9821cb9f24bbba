import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, InCompany, readerOf, Timestamp } from "../../storage/Columns.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

/** A department of a company: its instructions join the prompts of its employees. */
export const DepartmentRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type DepartmentRecord = typeof DepartmentRecord.Type

export interface DepartmentChange {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly instructions?: string | undefined
}

/** Departments of a company. Every read is scoped by company id. */
export interface DepartmentsRepository {
  readonly create: (department: DepartmentRecord) => Effect.Effect<DepartmentRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<DepartmentRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<DepartmentRecord>; readonly total: number }>
  /** Applies the supplied fields; `updatedAt` becomes `now`, and always moves forward. */
  readonly update: (
    companyId: string,
    id: string,
    change: DepartmentChange,
    now: Date
  ) => Effect.Effect<Option.Option<DepartmentRecord>>
  /** Removes it; its employees are left without a department (the column's `ON DELETE SET NULL`). */
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<DepartmentRecord>>
}

const DepartmentRow = fromColumns(DepartmentRecord)

export class DepartmentsRepo extends Context.Service<DepartmentsRepo, DepartmentsRepository>()("departments/DepartmentsRepo") {
  static readonly layer = Layer.effect(DepartmentsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const insert = SqlSchema.findOne({
      Request: DepartmentRow,
      Result: DepartmentRow,
      execute: (row) => sql`INSERT INTO departments ${sql.insert(row)} RETURNING *`
    })
    const byId = SqlSchema.findOneOption({
      Request: InCompany,
      Result: DepartmentRow,
      execute: ({ companyId, id }) => sql`SELECT * FROM departments WHERE company_id = ${companyId} AND id = ${id}`
    })
    const removed = SqlSchema.findOneOption({
      Request: InCompany,
      Result: DepartmentRow,
      execute: ({ companyId, id }) => sql`DELETE FROM departments WHERE company_id = ${companyId} AND id = ${id} RETURNING *`
    })
    const rows = readerOf(DepartmentRow)
    return {
      create: Effect.fn("DepartmentsRepo.create")((department: DepartmentRecord) => insert(department), Effect.orDie),
      get: Effect.fn("DepartmentsRepo.get")((companyId: string, id: string) => byId({ companyId, id }), Effect.orDie),
      list: Effect.fn("DepartmentsRepo.list")(
        (companyId: string, window: Window) =>
          selectRecords(DepartmentRow, sql, "departments", sql`company_id = ${companyId}`, window),
        Effect.orDie
      ),
      update: Effect.fn("DepartmentsRepo.update")(function*(companyId, id, change, now) {
        return yield* rows.first(sql`
          UPDATE departments SET
            name = coalesce(${change.name ?? null}, name),
            description = coalesce(${change.description ?? null}, description),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      remove: Effect.fn("DepartmentsRepo.remove")((companyId: string, id: string) => removed({ companyId, id }), Effect.orDie)
    }
  }))
}
