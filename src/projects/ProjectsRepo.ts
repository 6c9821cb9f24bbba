import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { jsonParam } from "../storage/Rows.ts"
import { selectPage, type Window } from "../storage/Windows.ts"

export type Sharing = "Private" | "Shared"

export interface ProjectRecord {
  readonly id: string
  readonly companyId: string
  /** The owner user; null only for one made by a company key, before keys had a creator, in a company without an owner (migration 0016). */
  readonly ownerUserId: string | null
  readonly name: string
  readonly description: string
  readonly instructions: string
  readonly sharing: Sharing
  readonly settings: Readonly<Record<string, unknown>>
  readonly createdAt: Date
  readonly updatedAt: Date
}

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

export class ProjectsRepo extends Context.Service<ProjectsRepo, ProjectsRepository>()("projects/ProjectsRepo") {
  static readonly layer = Layer.effect(ProjectsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const visible = (companyId: string, viewer: string | null) =>
      sql`company_id = ${companyId} AND (sharing = 'Shared' OR owner_user_id IS NOT DISTINCT FROM ${viewer})`
    return {
      create: Effect.fn("ProjectsRepo.create")(function*(project) {
        const rows = yield* sql<ProjectRow>`
          INSERT INTO projects (id, company_id, owner_user_id, name, description, instructions, sharing, settings,
            created_at, updated_at)
          VALUES (${project.id}, ${project.companyId}, ${project.ownerUserId}, ${project.name}, ${project.description},
            ${project.instructions}, ${project.sharing}, ${jsonParam(project.settings)}::jsonb, ${project.createdAt},
            ${project.updatedAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("ProjectsRepo.get")(function*(companyId, id) {
        const rows = yield* sql<ProjectRow>`SELECT * FROM projects WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      listVisible: Effect.fn("ProjectsRepo.listVisible")(function*(companyId, viewer, window) {
        const page = yield* selectPage<ProjectRow>(sql, "projects", visible(companyId, viewer), window)
        return { rows: page.rows.map(fromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("ProjectsRepo.update")(function*(companyId, id, change, now) {
        const rows = yield* sql<ProjectRow>`
          UPDATE projects SET
            name = coalesce(${change.name ?? null}, name),
            description = coalesce(${change.description ?? null}, description),
            instructions = coalesce(${change.instructions ?? null}, instructions),
            sharing = coalesce(${change.sharing ?? null}, sharing),
            settings = coalesce(${change.settings === undefined ? null : jsonParam(change.settings)}::jsonb, settings),
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      remove: Effect.fn("ProjectsRepo.remove")(function*(companyId, id) {
        const rows = yield* sql`DELETE FROM projects WHERE company_id = ${companyId} AND id = ${id} RETURNING id`
        return rows.length > 0
      }, Effect.orDie)
    }
  }))
}

interface ProjectRow {
  readonly id: string
  readonly company_id: string
  readonly owner_user_id: string | null
  readonly name: string
  readonly description: string
  readonly instructions: string
  readonly sharing: Sharing
  readonly settings: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: ProjectRow): ProjectRecord => ({
  id: row.id,
  companyId: row.company_id,
  ownerUserId: row.owner_user_id,
  name: row.name,
  description: row.description,
  instructions: row.instructions,
  sharing: row.sharing,
  settings: row.settings,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
