import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, JsonObject, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const TemplateRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** Who made it; null for a company API key. */
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  subject: Schema.String,
  bodyDocument: JsonObject,
  /** 1 when created; one more with every save of the body document. */
  bodyVersion: NumberColumn,
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type TemplateRecord = typeof TemplateRecord.Type

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

const TemplateRow = fromColumns(TemplateRecord)

export class TemplatesRepo extends Context.Service<TemplatesRepo, TemplatesRepository>()("templates/TemplatesRepo") {
  static readonly layer = Layer.effect(TemplatesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(TemplateRow)
    return {
      create: Effect.fn("TemplatesRepo.create")(function*(template) {
        return yield* records.one(sql`
          INSERT INTO campaign_templates (id, company_id, user_id, name, subject, body_document, body_version, created_at, updated_at)
          VALUES (${template.id}, ${template.companyId}, ${template.userId}, ${template.name}, ${template.subject},
            ${jsonParam(template.bodyDocument)}::jsonb, ${template.bodyVersion}, ${template.createdAt}, ${template.updatedAt})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("TemplatesRepo.get")(function*(companyId, id) {
        return yield* records.first(sql`
          SELECT * FROM campaign_templates WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      list: Effect.fn("TemplatesRepo.list")(function*(companyId, window) {
        return yield* selectRecords(TemplateRow, sql, "campaign_templates", sql`company_id = ${companyId}`, window)
      }, Effect.orDie),
      update: Effect.fn("TemplatesRepo.update")(function*(companyId, id, change, now) {
        const body = change.bodyDocument === undefined ? null : jsonParam(change.bodyDocument)
        return yield* records.first(sql`
          UPDATE campaign_templates SET
            name = coalesce(${change.name ?? null}, name),
            subject = coalesce(${change.subject ?? null}, subject),
            body_document = coalesce(${body}::jsonb, body_document),
            body_version = body_version + ${body === null ? 0 : 1},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      remove: Effect.fn("TemplatesRepo.remove")(function*(companyId, id) {
        return yield* records.first(sql`
          DELETE FROM campaign_templates WHERE company_id = ${companyId} AND id = ${id} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
