import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { fromColumns, NumberColumn } from "../../storage/Columns.ts"
import { newId } from "../../platform/Ids.ts"
import { JsonObject } from "../../platform/Schemas.ts"
import { leasedClaim } from "../../storage/LeasedClaim.ts"
import { jsonParam } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import { type BodyDocument, CampaignStatus, VersionSource } from "./Api.ts"

/** A body as stored: checked when it came in (`BodyDocument`), read back as it is. */
const StoredBody = Schema.StructWithRest(Schema.Struct({ html: Schema.String }), [JsonObject])

export const CampaignRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  subject: Schema.String,
  fromName: Schema.NullOr(Schema.String),
  fromEmail: Schema.NullOr(Schema.String),
  replyTo: Schema.NullOr(Schema.String),
  listId: Schema.NullOr(Schema.String),
  /** The smart list it sends to instead of a contact list. */
  smartListId: Schema.NullOr(Schema.String),
  status: CampaignStatus,
  bodyDocument: StoredBody,
  bodyVersion: Schema.Number,
  scheduledAt: Schema.NullOr(Schema.Date),
  startedAt: Schema.NullOr(Schema.Date),
  completedAt: Schema.NullOr(Schema.Date),
  errorMessage: Schema.NullOr(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type CampaignRecord = typeof CampaignRecord.Type
/** A campaign row of `campaigns` (also read by the recipients' statements that move a campaign). */
export const CampaignRow = fromColumns(CampaignRecord)

export const VersionSummaryRecord = Schema.Struct({
  campaignId: Schema.String,
  version: Schema.Number,
  source: VersionSource,
  createdAt: Schema.Date
})
export type VersionSummaryRecord = typeof VersionSummaryRecord.Type

export const VersionRecord = Schema.Struct({ ...VersionSummaryRecord.fields, bodyDocument: StoredBody })
export type VersionRecord = typeof VersionRecord.Type

/** Fields a PATCH (or a save of the body) changes; undefined leaves a field, null clears it. */
export interface CampaignChange {
  readonly name?: string | undefined
  readonly subject?: string | undefined
  readonly fromName?: string | null | undefined
  readonly fromEmail?: string | null | undefined
  readonly replyTo?: string | null | undefined
  readonly listId?: string | null | undefined
  /** A new body: saved as the next version, from `source`. */
  readonly body?: { readonly document: BodyDocument; readonly source: VersionSource } | undefined
}

/** Whom a campaign sends to: a contact list or a smart list. */
export type RecipientSource =
  | { readonly listId: string; readonly smartListId: null }
  | { readonly listId: null; readonly smartListId: string }

/** What a status move sets besides the status; undefined leaves a field. */
export interface MoveChange {
  readonly source?: RecipientSource | undefined
  readonly scheduledAt?: Date | null | undefined
  readonly startedAt?: Date | undefined
  readonly completedAt?: Date | undefined
  readonly errorMessage?: string | undefined
}

const Total = fromColumns(Schema.Struct({ count: NumberColumn }))

/**
 * Campaigns of a company and their body versions. Every read is scoped by
 * company id; every change names the statuses it is allowed from and
 * answers none when the campaign is missing or no longer in one of them, so
 * that two concurrent moves can never both win.
 */
export class CampaignsRepo extends Context.Service<CampaignsRepo, {
  /** Stores a new campaign; with a body (version 1) also its first version. */
  readonly create: (campaign: CampaignRecord, source: VersionSource) => Effect.Effect<CampaignRecord>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<CampaignRecord>>
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<CampaignRecord>; readonly total: number }>
  /** Applies `change` (a body becomes version `bodyVersion + 1`, atomically) if the status is in `from`. */
  readonly update: (
    companyId: string,
    id: string,
    change: CampaignChange,
    from: ReadonlyArray<CampaignStatus>,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /** Moves the status `from` → `to` with `change`; none when it was not in `from`. */
  readonly move: (
    companyId: string,
    id: string,
    from: ReadonlyArray<CampaignStatus>,
    to: CampaignStatus,
    change: MoveChange,
    now: Date
  ) => Effect.Effect<Option.Option<CampaignRecord>>
  /**
   * Leases up to `limit` scheduled campaigns whose `scheduledAt` has come and
   * that no unexpired lease holds, until `expiresAt`. Concurrent callers never
   * get the same campaign.
   */
  readonly claimDue: (now: Date, expiresAt: Date, limit: number) => Effect.Effect<ReadonlyArray<CampaignRecord>>
  /** Deletes the campaign (with its versions) if its status is in `from`. */
  readonly remove: (companyId: string, id: string, from: ReadonlyArray<CampaignStatus>) => Effect.Effect<boolean>
  /** The campaign's versions without their bodies, newest first. */
  readonly versions: (
    campaignId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<VersionSummaryRecord>; readonly total: number }>
  readonly version: (campaignId: string, version: number) => Effect.Effect<Option.Option<VersionRecord>>
}>()("campaigns/CampaignsRepo") {
  static readonly layer = Layer.effect(CampaignsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nullable = <A>(value: A | null | undefined) => (value === undefined ? sql`false` : sql`true`)
    const campaigns = <Req extends Schema.Top>(
      Request: Req,
      execute: (request: Req["Encoded"]) => Effect.Effect<ReadonlyArray<unknown>, unknown>
    ) => SqlSchema.findAll({ Request, Result: CampaignRow, execute })

    const create = SqlSchema.findOne({
      Request: Schema.Struct({ campaign: CampaignRecord, source: VersionSource }),
      Result: CampaignRow,
      execute: ({ campaign: c, source }) =>
        sql`
          WITH created AS (
            INSERT INTO campaigns (id, company_id, user_id, name, subject, from_name, from_email, reply_to, list_id, status,
              body_document, body_version, scheduled_at, started_at, completed_at, error_message, created_at, updated_at)
            VALUES (${c.id}, ${c.companyId}, ${c.userId}, ${c.name}, ${c.subject}, ${c.fromName}, ${c.fromEmail},
              ${c.replyTo}, ${c.listId}, ${c.status}, ${jsonParam(c.bodyDocument)}::jsonb, ${c.bodyVersion},
              ${c.scheduledAt}, ${c.startedAt}, ${c.completedAt}, ${c.errorMessage}, ${c.createdAt}, ${c.updatedAt})
            RETURNING *
          ), first_version AS (
            INSERT INTO campaign_versions (campaign_id, version, body_document, source, created_at)
            SELECT id, body_version, body_document, ${source}, created_at FROM created WHERE body_version > 0
          )
          SELECT * FROM created`
    })
    const byId = Schema.Struct({ companyId: Schema.String, id: Schema.String })
    const get = SqlSchema.findOneOption({
      Request: byId,
      Result: CampaignRow,
      execute: ({ companyId, id }) => sql`SELECT * FROM campaigns WHERE company_id = ${companyId} AND id = ${id}`
    })
    const listed = Schema.Struct({ companyId: Schema.String, limit: Schema.Number, offset: Schema.Number })
    const list = campaigns(listed, ({ companyId, limit, offset }) =>
      sql`SELECT * FROM campaigns WHERE company_id = ${companyId} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`)
    const countOf = SqlSchema.findOne({
      Request: Schema.Struct({ companyId: Schema.String }),
      Result: Total,
      execute: ({ companyId }) => sql`SELECT count(*)::int AS count FROM campaigns WHERE company_id = ${companyId}`
    })
    const claimDue = campaigns(
      Schema.Struct({ now: Schema.Date, expiresAt: Schema.Date, limit: Schema.Number }),
      ({ now, expiresAt, limit }) => {
        const free = sql`(lease_expires_at IS NULL OR lease_expires_at <= ${now})`
        return leasedClaim(sql, {
          table: "campaigns",
          where: sql`status = 'scheduled' AND scheduled_at <= ${now} AND ${free}`,
          orderBy: sql`scheduled_at`,
          limit,
          lease: { token: newId("lease"), until: expiresAt },
          update: { where: sql`status = 'scheduled' AND ${free}` },
          returning: sql`campaigns.*`
        })
      }
    )
    const ofCampaign = Schema.Struct({ campaignId: Schema.String, limit: Schema.Number, offset: Schema.Number })
    const versions = SqlSchema.findAll({
      Request: ofCampaign,
      Result: fromColumns(VersionSummaryRecord),
      execute: ({ campaignId, limit, offset }) =>
        sql`SELECT campaign_id, version, source, created_at FROM campaign_versions WHERE campaign_id = ${campaignId}
          ORDER BY version DESC LIMIT ${limit} OFFSET ${offset}`
    })
    const versionCount = SqlSchema.findOne({
      Request: Schema.Struct({ campaignId: Schema.String }),
      Result: Total,
      execute: ({ campaignId }) => sql`SELECT count(*)::int AS count FROM campaign_versions WHERE campaign_id = ${campaignId}`
    })
    const version = SqlSchema.findOneOption({
      Request: Schema.Struct({ campaignId: Schema.String, version: Schema.Number }),
      Result: fromColumns(VersionRecord),
      execute: ({ campaignId, version }) =>
        sql`SELECT * FROM campaign_versions WHERE campaign_id = ${campaignId} AND version = ${version}`
    })

    return {
      create: (record, source) => Effect.orDie(create({ campaign: record, source })),
      get: (companyId, id) => Effect.orDie(get({ companyId, id })),
      list: (companyId, window) =>
        Effect.orDie(Effect.all({ rows: list({ companyId, ...window }), total: Effect.map(countOf({ companyId }), (row) => row.count) })),
      update: (companyId, id, change, from, now) => {
        const body = change.body
        return sql`
          WITH changed AS (
            UPDATE campaigns SET
              name = coalesce(${change.name ?? null}, name),
              subject = coalesce(${change.subject ?? null}, subject),
              from_name = CASE WHEN ${nullable(change.fromName)} THEN ${change.fromName ?? null} ELSE from_name END,
              from_email = CASE WHEN ${nullable(change.fromEmail)} THEN ${change.fromEmail ?? null} ELSE from_email END,
              reply_to = CASE WHEN ${nullable(change.replyTo)} THEN ${change.replyTo ?? null} ELSE reply_to END,
              list_id = CASE WHEN ${nullable(change.listId)} THEN ${change.listId ?? null} ELSE list_id END,
              smart_list_id = CASE WHEN ${change.listId !== undefined} THEN NULL ELSE smart_list_id END,
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
          SELECT * FROM changed`.pipe(Effect.flatMap(decodeCampaign), Effect.orDie)
      },
      move: (companyId, id, from, to, change, now) =>
        sql`
          UPDATE campaigns SET
            status = ${to},
            list_id = CASE WHEN ${change.source !== undefined} THEN ${change.source?.listId ?? null} ELSE list_id END,
            smart_list_id = CASE WHEN ${change.source !== undefined} THEN ${change.source?.smartListId ?? null}
              ELSE smart_list_id END,
            scheduled_at = CASE WHEN ${nullable(change.scheduledAt)} THEN ${change.scheduledAt ?? null}::timestamptz
              ELSE scheduled_at END,
            started_at = coalesce(${change.startedAt ?? null}::timestamptz, started_at),
            completed_at = coalesce(${change.completedAt ?? null}::timestamptz, completed_at),
            error_message = coalesce(${change.errorMessage ?? null}, error_message),
            lease_token = NULL,
            lease_expires_at = NULL,
            updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
          WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)}
          RETURNING *`.pipe(Effect.flatMap(decodeCampaign), Effect.orDie),
      claimDue: (now, expiresAt, limit) => Effect.orDie(claimDue({ now, expiresAt, limit })),
      remove: (companyId, id, from) =>
        sql`DELETE FROM campaigns WHERE company_id = ${companyId} AND id = ${id} AND status IN ${sql.in(from)} RETURNING id`
          .pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      versions: (campaignId, window) =>
        Effect.orDie(Effect.all({
          rows: versions({ campaignId, ...window }),
          total: Effect.map(versionCount({ campaignId }), (row) => row.count)
        })),
      version: (campaignId, number) => Effect.orDie(version({ campaignId, version: number }))
    }
  }))
}

/** The campaign a statement `RETURNING *` answered, if any. */
export const decodeCampaign = (rows: ReadonlyArray<unknown>) =>
  Effect.map(Schema.decodeUnknownEffect(Schema.Array(CampaignRow))(rows), (campaigns) => Option.fromNullishOr(campaigns[0]))
