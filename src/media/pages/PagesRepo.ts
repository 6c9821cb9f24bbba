import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { VersionSource } from "../../outreach/campaigns/Api.ts"
import { JsonObject } from "../../platform/Schemas.ts"
import { fromColumns, InCompany, readerOf } from "../../storage/Columns.ts"
import { jsonParam, toNumber } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import { PageStatus } from "./Api.ts"

/** A body as stored: checked when it came in (`BodyDocument`), read back as it is. */
const StoredBody = Schema.StructWithRest(Schema.Struct({ html: Schema.String }), [JsonObject])

/** What the public URL answers while the page is published, made when the page changes. */
export const Served = Schema.Struct({ servedHtml: Schema.String, servedEtag: Schema.String })
export type Served = typeof Served.Type

export const PageRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  userId: Schema.NullOr(Schema.String),
  name: Schema.String,
  slug: Schema.String,
  status: PageStatus,
  bodyDocument: StoredBody,
  bodyVersion: Schema.Number,
  thankYouUrl: Schema.NullOr(Schema.String),
  ...Served.fields,
  publishedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type PageRecord = typeof PageRecord.Type
const PageRow = fromColumns(PageRecord)

/** A page with its company's slug: what its public URL is made of. */
const PageWithCompany = Schema.Struct({ ...PageRecord.fields, companySlug: Schema.String })
export type PageWithCompany = typeof PageWithCompany.Type

export const PageVersionSummaryRecord = Schema.Struct({
  pageId: Schema.String,
  version: Schema.Number,
  source: VersionSource,
  createdAt: Schema.Date
})
export type PageVersionSummaryRecord = typeof PageVersionSummaryRecord.Type
const PageVersionRecord = Schema.Struct({ ...PageVersionSummaryRecord.fields, bodyDocument: StoredBody })

/** A published page as its public URL serves it. */
export const PublishedRecord = Schema.Struct({
  companySlug: Schema.String,
  slug: Schema.String,
  id: Schema.String,
  companyId: Schema.String,
  thankYouUrl: Schema.NullOr(Schema.String),
  ...Served.fields
})
export type PublishedRecord = typeof PublishedRecord.Type

/** A public address: `/p/{company}/{page}`. */
export interface PageAddress {
  readonly company: string
  readonly page: string
}

/** The page after a change: every field, the body with the source of its new version when it changed. */
export interface PageWrite {
  readonly page: PageRecord
  readonly newVersion: VersionSource | undefined
}

/**
 * Landing pages of a company and their body versions. Every read is scoped
 * by company id; a write whose slug another page of the company has answers
 * `"slugTaken"`.
 */
export class PagesRepo extends Context.Service<PagesRepo, {
  /** Stores a new page; with a body (version 1) also its first version. */
  readonly create: (page: PageRecord, source: VersionSource) => Effect.Effect<PageRecord | "slugTaken">
  /** The page with its company's slug; `forUpdate` locks the row for the rest of the transaction. */
  readonly get: (companyId: string, id: string, forUpdate?: boolean) => Effect.Effect<Option.Option<PageWithCompany>>
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<PageWithCompany>; readonly total: number }>
  /** Writes the page as given (read with `get(…, true)` in the same transaction), and its new body version if any. */
  readonly write: (change: PageWrite, now: Date) => Effect.Effect<PageRecord | "slugTaken">
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<PageRecord>>
  /** The page's versions without their bodies, newest first. */
  readonly versions: (
    pageId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<PageVersionSummaryRecord>; readonly total: number }>
  readonly version: (pageId: string, version: number) => Effect.Effect<Option.Option<typeof PageVersionRecord.Type>>
  /** The published pages at these addresses (one statement for all). */
  readonly published: (addresses: ReadonlyArray<PageAddress>) => Effect.Effect<ReadonlyArray<PublishedRecord>>
}>()("pages/PagesRepo") {
  static readonly layer = Layer.effect(PagesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pages = readerOf(PageRow)
    const withCompany = readerOf(fromColumns(PageWithCompany))
    const count = (statement: Effect.Effect<ReadonlyArray<any>, unknown>) => Effect.map(statement, (rows) => toNumber(rows[0].count))
    const slugTaken = (rows: ReadonlyArray<PageRecord>) => rows[0] ?? "slugTaken" as const

    const insertVersion = (page: PageRecord, source: VersionSource, at: Date) =>
      sql`INSERT INTO landing_page_versions (page_id, version, body_document, source, created_at)
        VALUES (${page.id}, ${page.bodyVersion}, ${jsonParam(page.bodyDocument)}::jsonb, ${source}, ${at})`

    const versions = SqlSchema.findAll({
      Request: Schema.Struct({ pageId: Schema.String, limit: Schema.Number, offset: Schema.Number }),
      Result: fromColumns(PageVersionSummaryRecord),
      execute: ({ pageId, limit, offset }) =>
        sql`SELECT page_id, version, source, created_at FROM landing_page_versions WHERE page_id = ${pageId}
          ORDER BY version DESC LIMIT ${limit} OFFSET ${offset}`
    })
    const version = SqlSchema.findOneOption({
      Request: Schema.Struct({ pageId: Schema.String, version: Schema.Number }),
      Result: fromColumns(PageVersionRecord),
      execute: (request) =>
        sql`SELECT * FROM landing_page_versions WHERE page_id = ${request.pageId} AND version = ${request.version}`
    })
    const published = SqlSchema.findAll({
      Request: Schema.Struct({ addresses: Schema.Array(Schema.Struct({ company: Schema.String, page: Schema.String })) }),
      Result: fromColumns(PublishedRecord),
      execute: ({ addresses }) =>
        sql`SELECT c.slug AS company_slug, p.slug, p.id, p.company_id, p.thank_you_url, p.served_html, p.served_etag
          FROM jsonb_to_recordset(${jsonParam(addresses)}::jsonb) AS a(company text, page text)
          JOIN companies c ON c.slug = a.company
          JOIN landing_pages p ON p.company_id = c.id AND p.slug = a.page
          WHERE p.status = 'published'`
    })
    const remove = SqlSchema.findOneOption({
      Request: InCompany,
      Result: PageRow,
      execute: ({ companyId, id }) => sql`DELETE FROM landing_pages WHERE company_id = ${companyId} AND id = ${id} RETURNING *`
    })

    return {
      create: (page, source) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* pages.all(sql`
            INSERT INTO landing_pages (id, company_id, user_id, name, slug, status, body_document, body_version,
              thank_you_url, served_html, served_etag, published_at, created_at, updated_at)
            VALUES (${page.id}, ${page.companyId}, ${page.userId}, ${page.name}, ${page.slug}, ${page.status},
              ${jsonParam(page.bodyDocument)}::jsonb, ${page.bodyVersion}, ${page.thankYouUrl}, ${page.servedHtml},
              ${page.servedEtag}, ${page.publishedAt}, ${page.createdAt}, ${page.updatedAt})
            ON CONFLICT (company_id, slug) DO NOTHING
            RETURNING *`)
          if (rows.length > 0 && page.bodyVersion > 0) yield* insertVersion(page, source, page.createdAt)
          return slugTaken(rows)
        })).pipe(Effect.orDie),
      get: (companyId, id, forUpdate = false) =>
        withCompany.first(sql`
          SELECT p.*, c.slug AS company_slug FROM landing_pages p JOIN companies c ON c.id = p.company_id
          WHERE p.company_id = ${companyId} AND p.id = ${id} ${forUpdate ? sql`FOR UPDATE OF p` : sql``}`).pipe(Effect.orDie),
      list: (companyId, window) =>
        Effect.all({
          rows: withCompany.all(sql`
            SELECT p.*, c.slug AS company_slug FROM landing_pages p JOIN companies c ON c.id = p.company_id
            WHERE p.company_id = ${companyId} ORDER BY p.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`),
          total: count(sql`SELECT count(*)::int AS count FROM landing_pages WHERE company_id = ${companyId}`)
        }).pipe(Effect.orDie),
      write: ({ page, newVersion }, now) =>
        Effect.gen(function*() {
          const rows = yield* pages.all(sql`
            UPDATE landing_pages SET name = ${page.name}, slug = ${page.slug}, status = ${page.status},
              body_document = ${jsonParam(page.bodyDocument)}::jsonb, body_version = ${page.bodyVersion},
              thank_you_url = ${page.thankYouUrl}, served_html = ${page.servedHtml}, served_etag = ${page.servedEtag},
              published_at = ${page.publishedAt},
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${page.companyId} AND id = ${page.id}
              AND NOT EXISTS (SELECT 1 FROM landing_pages o WHERE o.company_id = ${page.companyId} AND o.slug = ${page.slug}
                AND o.id <> ${page.id})
            RETURNING *`).pipe(
            // Two writes taking one slug at once: the unique index stops the later one, which answers as taken.
            Effect.catchTag("SqlError", (error) => error.reason._tag === "UniqueViolation" ? Effect.succeed([]) : Effect.fail(error))
          )
          if (rows.length > 0 && newVersion !== undefined) yield* insertVersion(page, newVersion, now)
          return slugTaken(rows)
        }).pipe(Effect.orDie),
      remove: (companyId, id) => Effect.orDie(remove({ companyId, id })),
      versions: (pageId, window) =>
        Effect.orDie(Effect.all({
          rows: versions({ pageId, ...window }),
          total: count(sql`SELECT count(*)::int AS count FROM landing_page_versions WHERE page_id = ${pageId}`)
        })),
      version: (pageId, number) => Effect.orDie(version({ pageId, version: number })),
      published: (addresses) => addresses.length === 0 ? Effect.succeed([]) : Effect.orDie(published({ addresses }))
    }
  }))
}
