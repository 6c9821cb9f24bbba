import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { jsonParam } from "../storage/Rows.ts"
import { selectPage, type Window } from "../storage/Windows.ts"

export interface TemplateRecord {
  readonly id: string
  readonly companyId: string
  /** Who made it; null for a company API key. */
  readonly userId: string | null
  readonly name: string
  readonly subject: string
  readonly bodyDocument: Readonly<Record<string, unknown>>
  /** 1 when created; one more with every save of the body document. */
  readonly bodyVersion: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface TemplateChange {
  readonly name?: string | undefined
  readonly subject?: string | undefined
  readonly bodyDocument?: Readonly<Record<string, unknown>> | undefined
}

/** Campaign templates of a company. Every operation is scoped by company id. */
export interface TemplatesRepository {
  readonly create: (template: TemplateRecord) => Effect.Effect<TemplateRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<TemplateRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<TemplateRecord>; readonly total: number }>
  /** Applies the supplied fields; `updatedAt` becomes `now`, and always moves forward. */
  readonly update: (
    companyId: string,
    id: string,
    change: TemplateChange,
    now: Date
  ) => Effect.Effect<Option.Option<TemplateRecord>>
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<TemplateRecord>>
}

export class TemplatesRepo extends Context.Service<TemplatesRepo, TemplatesRepository>()("templates/TemplatesRepo") {
  static readonly layer = Layer.effect(TemplatesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: Effect.fn("TemplatesRepo.create")(function*(template) {
        const rows = yield* sql<TemplateRow>`
          INSERT INTO campaign_templates (id, company_id, user_id, name, subject, body_document, body_version, created_at, updated_at)
          VALUES (${template.id}, ${template.companyId}, ${template.userId}, ${template.name}, ${template.subject},
            ${jsonParam(template.bodyDocument)}::jsonb, ${template.bodyVersion}, ${template.createdAt}, ${template.updatedAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("TemplatesRepo.get")(function*(companyId, id) {
        const rows = yield* sql<TemplateRow>`
          SELECT * FROM campaign_templates WHERE company_id = ${companyId} AND id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      list: Effect.fn("TemplatesRepo.list")(function*(companyId, window) {
        const page = yield* selectPage<TemplateRow>(sql, "campaign_templates", sql`company_id = ${companyId}`, window)
        return { rows: page.rows.map(fromRow), total: page.total }
      }, Effect.orDie),
      update: Effect.fn("TemplatesRepo.update")(function*(companyId, id, change, now) {
        const body = change.bodyDocument === undefined ? null : jsonParam(change.bodyDocument)
        const rows = yield* sql<TemplateRow>`
          UPDATE campaign_templates SET
            name = coalesce(${change.name ?? null}, name),
            subject = coalesce(${change.subject ?? null}, subject),
            body_document = coalesce(${body}::jsonb, body_document),
            body_version = body_version + ${body === null ? 0 : 1},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      remove: Effect.fn("TemplatesRepo.remove")(function*(companyId, id) {
        const rows = yield* sql<TemplateRow>`
          DELETE FROM campaign_templates WHERE company_id = ${companyId} AND id = ${id} RETURNING *`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie)
    }
  }))
}

interface TemplateRow {
  readonly id: string
  readonly company_id: string
  readonly user_id: string | null
  readonly name: string
  readonly subject: string
  readonly body_document: Record<string, unknown>
  readonly body_version: number
  readonly created_at: Date
  readonly updated_at: Date
}

const fromRow = (row: TemplateRow): TemplateRecord => ({
  id: row.id,
  companyId: row.company_id,
  userId: row.user_id,
  name: row.name,
  subject: row.subject,
  bodyDocument: row.body_document,
  bodyVersion: Number(row.body_version),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})
