import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, JsonObject, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const ProjectRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The owner user; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  ownerUserId: Schema.NullOr(Schema.String),
  name: Schema.String,
  description: Schema.String,
  instructions: Schema.String,
  sharing: Schema.Literals(["Private", "Shared"]),
  settings: JsonObject,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type ProjectRecord = typeof ProjectRecord.Type
export type Sharing = ProjectRecord["sharing"]

export interface ProjectChange {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly instructions?: string | undefined
  readonly sharing?: Sharing | undefined
  readonly settings?: Readonly<Record<string, unknown>> | undefined
}

/** Projects of a company. Every read is scoped by company id. */
export interface ProjectsRepository {
  readonly create: (project: ProjectRecord) => Effect.Effect<ProjectRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<ProjectRecord>>
  /** Shared projects plus those `viewer` owns (null: the company's own), newest first. */
  readonly listVisible: (
    companyId: string,
    viewer: string | null,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<ProjectRecord>; readonly total: number }>
  /** Applies the supplied fields; `updatedAt` becomes `now`, and always moves forward. */
  readonly update: (
    companyId: string,
    id: string,
    change: ProjectChange,
    now: Date
  ) => Effect.Effect<Option.Option<ProjectRecord>>
  readonly remove: (companyId: string, id: string) => Effect.Effect<boolean>
}

const ProjectRow = fromColumns(ProjectRecord)

export class ProjectsRepo extends Context.Service<ProjectsRepo, ProjectsRepository>()("projects/ProjectsRepo") {
  static readonly layer = Layer.effect(ProjectsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(ProjectRow)
    const visible = (companyId: string, viewer: string | null) =>
      sql`company_id = ${companyId} AND (sharing = 'Shared' OR owner_user_id IS NOT DISTINCT FROM ${viewer})`
    return {
      create: Effect.fn("ProjectsRepo.create")(function*(project) {
        return yield* records.one(sql`
          INSERT INTO projects (id, company_id, owner_user_id, name, description, instructions, sharing, settings,
            created_at, updated_at)
          VALUES (${project.id}, ${project.companyId}, ${project.ownerUserId}, ${project.name}, ${project.description},
            ${project.instructions}, ${project.sharing}, ${jsonParam(project.settings)}::jsonb, ${project.createdAt},
            ${project.updatedAt})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("ProjectsRepo.get")(function*(companyId, id) {
        return yield* records.first(sql`SELECT * FROM projects WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      listVisible: Effect.fn("ProjectsRepo.listVisible")(function*(companyId, viewer, window) {
        return yield* selectRecords(ProjectRow, sql, "projects", visible(companyId, viewer), window)
      }, Effect.orDie),
      update: Effect.fn("ProjectsRepo.update")(function*(companyId, id, change, now) {
        return yield* records.first(sql`
          UPDATE projects SET
            name = coalesce(${change.name ?? null}, name),
            description = coalesce(${change.description ?? null}, description),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            sharing = coalesce(${change.sharing ?? null}, sharing),
            settings = coalesce(${change.settings === undefined ? null : jsonParam(change.settings)}::jsonb, settings),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      remove: Effect.fn("ProjectsRepo.remove")(function*(companyId, id) {
        const rows = yield* sql`DELETE FROM projects WHERE company_id = ${companyId} AND id = ${id} RETURNING id`
        return rows.length > 0
      }, Effect.orDie)
    }
  }))
}
