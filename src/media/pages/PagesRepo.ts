import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { bodyVersions, documentVersions, StoredBody, versionRecords, type VersionSource } from "../../storage/BodyVersions.ts"
import { fromColumns, InCompany, readerOf } from "../../storage/Columns.ts"
import { jsonParam, toNumber } from "../../storage/Rows.ts"
import type { Window } from "../../storage/Windows.ts"
import { PageStatus } from "./Api.ts"

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

const versioned = documentVersions("landing_page_versions", "pageId")
const { Summary: PageVersionSummaryRecord, Version: PageVersionRecord } = versionRecords(versioned)
type PageVersionSummaryRecord = typeof PageVersionSummaryRecord.Type

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

    const versions = bodyVersions(sql, versioned)

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
        pages.all(versions.saving(
          sql`
            INSERT INTO landing_pages (id, company_id, user_id, name, slug, status, body_document, body_version,
              thank_you_url, served_html, served_etag, published_at, created_at, updated_at)
            VALUES (${page.id}, ${page.companyId}, ${page.userId}, ${page.name}, ${page.slug}, ${page.status},
              ${jsonParam(page.bodyDocument)}::jsonb, ${page.bodyVersion}, ${page.thankYouUrl}, ${page.servedHtml},
              ${page.servedEtag}, ${page.publishedAt}, ${page.createdAt}, ${page.updatedAt})
            ON CONFLICT (company_id, slug) DO NOTHING
            RETURNING *`,
          source,
          page.createdAt
        )).pipe(Effect.map(slugTaken), Effect.orDie),
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
        pages.all(versions.saving(
          sql`
            UPDATE landing_pages SET name = ${page.name}, slug = ${page.slug}, status = ${page.status},
              body_document = ${jsonParam(page.bodyDocument)}::jsonb, body_version = ${page.bodyVersion},
              thank_you_url = ${page.thankYouUrl}, served_html = ${page.servedHtml}, served_etag = ${page.servedEtag},
              published_at = ${page.publishedAt},
              updated_at = greatest(${now}::timestamptz, updated_at + interval '1 millisecond')
            WHERE company_id = ${page.companyId} AND id = ${page.id}
              AND NOT EXISTS (SELECT 1 FROM landing_pages o WHERE o.company_id = ${page.companyId} AND o.slug = ${page.slug}
                AND o.id <> ${page.id})
            RETURNING *`,
          newVersion,
          now
        )).pipe(
          // Two writes taking one slug at once: the unique index stops the later one, which answers as taken.
          Effect.catchTag("SqlError", (error) => error.reason._tag === "UniqueViolation" ? Effect.succeed([]) : Effect.fail(error)),
          Effect.map(slugTaken),
          Effect.orDie
        ),
      remove: (companyId, id) => Effect.orDie(remove({ companyId, id })),
      versions: (pageId, window) => Effect.orDie(versions.list(pageId, window)),
      version: (pageId, number) => Effect.orDie(versions.get(pageId, number)),
      published: (addresses) => addresses.length === 0 ? Effect.succeed([]) : Effect.orDie(published({ addresses }))
    }
  }))
}
