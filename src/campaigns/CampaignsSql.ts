import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../platform/Ids.ts"
import { jsonParam, toNumber } from "../storage/Rows.ts"
import { selectPage } from "../storage/Windows.ts"
import type { BodyDocument, CampaignStatus, VersionSource } from "./Api.ts"
import type { CampaignRecord, CampaignsRepository, VersionRecord, VersionSummaryRecord } from "./CampaignsRepo.ts"

/** The SQL backend of `CampaignsRepo` (PostgreSQL and PGlite). */
export const makeSqlCampaignsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const one = (rows: ReadonlyArray<CampaignRow>) => Option.map(Option.fromNullishOr(rows[0]), fromRow)
  const nullable = <A>(value: A | null | undefined) => (value === undefined ? sql`false` : sql`true`)
  const repository: CampaignsRepository = {
    create: Effect.fn("CampaignsRepo.create")(function*(c, source) {
      const rows = yield* sql<CampaignRow>`
        WITH created AS (
          INSERT INTO campaigns (id, company_id, user_id, name, subject, from_name, from_email, reply_to, list_id, status,
            body_document, body_version, scheduled_at, started_at, completed_at, error_message, created_at, updated_at)
          VALUES (${c.id}, ${c.companyId}, ${c.userId}, ${c.name}, ${c.subject}, ${c.fromName}, ${c.fromEmail}, ${c.replyTo},
            ${c.listId}, ${c.status}, ${jsonParam(c.bodyDocument)}::jsonb, ${c.bodyVersion}, ${c.scheduledAt},
            ${c.startedAt}, ${c.completedAt}, ${c.errorMessage}, ${c.createdAt}, ${c.updatedAt})
          RETURNING *
        ), first_version AS (
          INSERT INTO campaign_versions (campaign_id, version, body_document, source, created_at)
          SELECT id, body_version, body_document, ${source}, created_at FROM created WHERE body_version > 0
        )
        SELECT * FROM created`
      return fromRow(rows[0])
    }, Effect.orDie),
    get: Effect.fn("CampaignsRepo.get")(function*(companyId, id) {
      return one(yield* sql<CampaignRow>`SELECT * FROM campaigns WHERE company_id = ${companyId} AND id = ${id}`)
    }, Effect.orDie),
    list: Effect.fn("CampaignsRepo.list")(function*(companyId, window) {
      const page = yield* selectPage<CampaignRow>(sql, "campaigns", sql`company_id = ${companyId}`, window)
      return { rows: page.rows.map(fromRow), total: page.total }
    }, Effect.orDie),
    update: Effect.fn("CampaignsRepo.update")(function*(companyId, id, change, from, now) {
      const body = change.body
      const rows = yield* sql<CampaignRow>`
        WITH changed AS (
          UPDATE campaigns SET
            name = coalesce(${change.name ?? null}, name),
            subject = coalesce(${change.subject ?? null}, subject),
            from_name = CASE WHEN ${nullable(change.fromName)} THEN ${change.fromName ?? null} ELSE from_name END,
            from_email = CASE WHEN ${nullable(change.fromEmail)} THEN ${change.fromEmail ?? null} ELSE from_email END,
            reply_to = CASE WHEN ${nullable(change.replyTo)} THEN ${change.replyTo ?? null} ELSE reply_to END,
            list_id = CASE WHEN ${nullable(change.listId)} THEN ${change.listId ?? null} ELSE list_id END,
            body_document = coalesce(${body === undefined ? null : jsonParam(body.document)}::jsonb, body_document),
            body_version = body_version + ${body === undefined ? 0 : 1},
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)}
          RETURNING *
        ), saved AS (
          INSERT INTO campaign_versions (campaign_id, version, body_document, source, created_at)
          SELECT id, body_version, body_document, ${body?.source ?? "api"}, ${now} FROM changed
          WHERE ${body === undefined ? sql`false` : sql`true`}
        )
        SELECT * FROM changed`
      return one(rows)
    }, Effect.orDie),
    move: Effect.fn("CampaignsRepo.move")(function*(companyId, id, from, to, change, now) {
      const rows = yield* sql<CampaignRow>`
        UPDATE campaigns SET
          status = ${to},
          list_id = coalesce(${change.listId ?? null}, list_id),
          scheduled_at = CASE WHEN ${nullable(change.scheduledAt)} THEN ${change.scheduledAt ?? null}::timestamptz
            ELSE scheduled_at END,
          started_at = coalesce(${change.startedAt ?? null}::timestamptz, started_at),
          completed_at = coalesce(${change.completedAt ?? null}::timestamptz, completed_at),
          error_message = coalesce(${change.errorMessage ?? null}, error_message),
          lease_token = NULL,
          lease_expires_at = NULL,
          updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
        WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)}
        RETURNING *`
      return one(rows)
    }, Effect.orDie),
    claimDue: Effect.fn("CampaignsRepo.claimDue")(function*(now, expiresAt, limit) {
      const free = sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
      const rows = yield* sql<CampaignRow>`
        UPDATE campaigns SET lease_token = ${newId("lease")}, lease_expires_at = ${expiresAt}
        WHERE id IN (
          SELECT id FROM campaigns
          WHERE status = 'scheduled' AND scheduled_at <= ${now} AND ${free}
          ORDER BY scheduled_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ) AND status = 'scheduled' AND ${free}
        RETURNING *`
      return rows.map(fromRow)
    }, Effect.orDie),
    remove: Effect.fn("CampaignsRepo.remove")(function*(companyId, id, from) {
      const rows = yield* sql`DELETE FROM campaigns
        WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)} RETURNING id`
      return rows.length > 0
    }, Effect.orDie),
    versions: Effect.fn("CampaignsRepo.versions")(function*(campaignId, window) {
      const [rows, count] = yield* Effect.all([
        sql<Omit<VersionRow, "body_document">>`SELECT campaign_id, version, source, created_at FROM campaign_versions WHERE campaign_id = ${campaignId}
          ORDER BY version DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
        sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM campaign_versions WHERE campaign_id = ${campaignId}`
      ])
      return { rows: rows.map(summaryFromRow), total: toNumber(count[0].count) }
    }, Effect.orDie),
    version: Effect.fn("CampaignsRepo.version")(function*(campaignId, version) {
      const rows = yield* sql<VersionRow>`SELECT * FROM campaign_versions
        WHERE campaign_id = ${campaignId} AND version = ${version}`
      return Option.map(Option.fromNullishOr(rows[0]), versionFromRow)
    }, Effect.orDie)
  }
  return repository
})

interface CampaignRow {
  readonly id: string
  readonly company_id: string
  readonly user_id: string | null
  readonly name: string
  readonly subject: string
  readonly from_name: string | null
  readonly from_email: string | null
  readonly reply_to: string | null
  readonly list_id: string | null
  readonly status: CampaignStatus
  readonly body_document: BodyDocument
  readonly body_version: number
  readonly scheduled_at: Date | null
  readonly started_at: Date | null
  readonly completed_at: Date | null
  readonly error_message: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const dateOrNull = (value: Date | null) => (value === null ? null : new Date(value))

export const fromRow = (row: CampaignRow): CampaignRecord => ({
  id: row.id,
  companyId: row.company_id,
  userId: row.user_id,
  name: row.name,
  subject: row.subject,
  fromName: row.from_name,
  fromEmail: row.from_email,
  replyTo: row.reply_to,
  listId: row.list_id,
  status: row.status,
  bodyDocument: row.body_document,
  bodyVersion: row.body_version,
  scheduledAt: dateOrNull(row.scheduled_at),
  startedAt: dateOrNull(row.started_at),
  completedAt: dateOrNull(row.completed_at),
  errorMessage: row.error_message,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at)
})

interface VersionRow {
  readonly campaign_id: string
  readonly version: number
  readonly body_document: BodyDocument
  readonly source: VersionSource
  readonly created_at: Date
}

const summaryFromRow = (row: Omit<VersionRow, "body_document">): VersionSummaryRecord => ({
  campaignId: row.campaign_id,
  version: row.version,
  source: row.source,
  createdAt: new Date(row.created_at)
})

const versionFromRow = (row: VersionRow): VersionRecord => ({ ...summaryFromRow(row), bodyDocument: row.body_document })
