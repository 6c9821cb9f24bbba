import { Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { columnOf, fromColumns, JsonObject, NumberColumn, readerOf, Timestamp } from "./Columns.ts"
import { toNumber } from "./Rows.ts"
import type { Window } from "./Windows.ts"

/**
 * A body with numbered versions: a campaign's or a landing page's body
 * document, a canvas's HTML. Every save of the body is its next version,
 * written by the statement that changes the body (so the body never points at
 * a version that is not there); versions are listed newest first, read one at
 * a time, and restored by saving an old body again (source `restore`). Each
 * area keeps its own tables; `bodyVersions` is their SQL, named by them.
 */

/** What saved a version: the API (create, PATCH), a restore, or an edit of a design or canvas chat. */
export const VersionSource = Schema.Literals(["api", "restore", "chat"])
export type VersionSource = typeof VersionSource.Type

/** A body document as stored: checked when it came in, read back as it is (an object whose `html` is a string). */
export const StoredBody = Schema.StructWithRest(Schema.Struct({ html: Schema.String }), [JsonObject])

const summaryFields = { version: NumberColumn, source: VersionSource, createdAt: Timestamp }

type SummaryFields<Owner extends string> = { readonly [K in Owner]: typeof Schema.String } & typeof summaryFields
type VersionFields<Owner extends string, Body extends string, BodySchema extends Schema.Top> =
  & SummaryFields<Owner>
  & { readonly [K in Body]: BodySchema }

/**
 * The records of a body's versions: `Summary` (`{<owner>, version, source, createdAt}`, what a list shows) and
 * `Version` (with the body as `<body>`), read from the columns of their snake_case names.
 */
export const versionRecords = <const Owner extends string, const Body extends string, BodySchema extends Schema.Top>(
  { body, Body, owner }: Pick<VersionedBody<Owner, Body, BodySchema>, "owner" | "body" | "Body">
) => {
  const Summary = Schema.Struct({ [owner]: Schema.String, ...summaryFields } as SummaryFields<Owner>)
  const Version = Schema.Struct({ ...Summary.fields, [body]: Body } as VersionFields<Owner, Body, BodySchema>)
  return { Summary, Version }
}

/** Where a body and its versions are stored. */
export interface VersionedBody<Owner extends string, Body extends string, BodySchema extends Schema.Top> {
  /** The versions' table (`campaign_versions`). */
  readonly table: string
  /** The versions' field naming the body's row by its `id` (`campaignId`, column `campaign_id`). */
  readonly owner: Owner
  /** The body's field (`bodyDocument`, column `body_document`): the same column in the body's row and its versions. */
  readonly body: Body
  readonly Body: BodySchema
  /** The body's row's column numbering its current version (`body_version`); 0 until a body is first saved. */
  readonly counter: string
  /** Whether each version also stores its body's row's `company_id` (then reads are given a company to keep to). */
  readonly inCompany: boolean
}

/** A body document (`body_document`, numbered by `body_version`) versioned in `table`: a campaign's, a landing page's. */
export const documentVersions = <const Owner extends string>(table: string, owner: Owner) => ({
  table,
  owner,
  body: "bodyDocument" as const,
  Body: StoredBody,
  counter: "body_version",
  inCompany: false
})

/** The SQL of a body's versions, on `sql`. */
export const bodyVersions = <const Owner extends string, const Body extends string, BodySchema extends Schema.Top>(
  sql: SqlClient.SqlClient,
  stored: VersionedBody<Owner, Body, BodySchema>
) => {
  const { Summary, Version } = versionRecords(stored)
  const summaries = readerOf(fromColumns(Summary))
  const versions = readerOf(fromColumns(Version))
  const table = sql(stored.table)
  const owner = sql(columnOf(stored.owner))
  const body = sql(columnOf(stored.body))
  const counter = sql(stored.counter)
  const company = stored.inCompany ? sql`company_id,` : sql``
  const scope = (ownerId: string, companyId: string | undefined) =>
    companyId === undefined ? sql`${owner} = ${ownerId}` : sql`${owner} = ${ownerId} AND company_id = ${companyId}`
  return {
    /**
     * `change`, a statement inserting or updating rows of the body's table `RETURNING *`, with the body's
     * current version of each row saved by the same statement, from `source` at `at`; none when `source` is
     * undefined (the body did not change) or the row has no body yet. Answers the rows `change` returned.
     */
    saving: (change: Statement.Fragment, source: VersionSource | undefined, at: Date) =>
      sql`
        WITH changed AS (${change}), saved AS (
          INSERT INTO ${table} (${owner}, ${company} version, ${body}, source, created_at)
          SELECT id, ${company} ${counter}, ${body}, ${source ?? "api"}, ${at} FROM changed
          WHERE ${source === undefined ? sql`false` : sql`true`} AND ${counter} > 0
        )
        SELECT * FROM changed`,
    /** The body's versions without the body, newest first; within `companyId` when the versions carry it. */
    list: (ownerId: string, window: Window, companyId?: string) => {
      const where = scope(ownerId, companyId)
      return Effect.all({
        rows: summaries.all(sql`
          SELECT ${owner}, version, source, created_at FROM ${table} WHERE ${where}
          ORDER BY version DESC LIMIT ${window.limit} OFFSET ${window.offset}`),
        total: Effect.map(
          sql<{ readonly count: unknown }>`SELECT count(*)::int AS count FROM ${table} WHERE ${where}`,
          (rows) => toNumber(rows[0]?.count)
        )
      })
    },
    /** One version with its body. */
    get: (ownerId: string, version: number, companyId?: string) =>
      versions.first(sql`SELECT * FROM ${table} WHERE ${scope(ownerId, companyId)} AND version = ${version}`)
  }
}
