import { Effect, type Option, Schema } from "effect"
import { type PageRequest, toPage } from "../platform/Pagination.ts"
import { orRefuse } from "../platform/Refusal.ts"
import { IsoDate, JsonObject, Text } from "../platform/Schemas.ts"
import { VersionSource } from "../storage/BodyVersions.ts"
import { type Window, windowOf } from "../storage/Windows.ts"

/**
 * The API side of a body with numbered versions (`src/storage/BodyVersions.ts`): the shapes its versions are
 * answered in, and the reads every versioned body answers alike. Each area keeps its endpoints and its
 * refusals; restoring is the area's own save of the found body, from source `restore`.
 */

/** The largest body document, as JSON text: generous for a visual builder's save, bounded for storage and sending. */
export const maxBodyDocumentChars = 1_000_000

/**
 * The body a campaign and a landing page version: `html` is the e-mail or
 * the page; whatever else a visual builder saves (`css`, `components`,
 * `styles`, …) is kept as given.
 */
export const BodyDocument = Schema.StructWithRest(
  Schema.Struct({ html: Text(maxBodyDocumentChars) }),
  [JsonObject]
).check(
  Schema.makeFilter((document) =>
    JSON.stringify(document).length <= maxBodyDocumentChars || `must be at most ${maxBodyDocumentChars} characters as JSON`
  )
).annotate({ identifier: "BodyDocument" })
export type BodyDocument = typeof BodyDocument.Type

type SummaryFields<Owner extends string> =
  & { readonly [K in Owner]: typeof Schema.String }
  & { readonly version: typeof Schema.Int; readonly source: typeof VersionSource; readonly created_date: typeof IsoDate }

/**
 * `Summary` `{<owner>, version, source, created_date}` (identifier `<identifier>Summary`), what a list of
 * versions shows, and `Version` (identifier `<identifier>`), one version with its body as `<body>`.
 */
export const versionSchemas = <const Owner extends string, const Body extends string, BodySchema extends Schema.Top>(
  identifier: string,
  { body, Body, owner }: { readonly owner: Owner; readonly body: Body; readonly Body: BodySchema }
) => {
  const Summary = Schema.Struct({
    [owner]: Schema.String,
    version: Schema.Int,
    /** What saved it: the API (create, PATCH), a restore, or the design chat. */
    source: VersionSource,
    created_date: IsoDate
  } as SummaryFields<Owner>).annotate({ identifier: `${identifier}Summary` })
  const Version = Schema.Struct({ ...Summary.fields, [body]: Body } as SummaryFields<Owner> & { readonly [K in Body]: BodySchema })
    .annotate({ identifier })
  return { Summary, Version }
}

/** A version record as `versionSchemas` answers it: `createdAt` as `created_date`. */
export const answeredVersion = <V extends { readonly createdAt: Date }>({ createdAt, ...version }: V) => ({
  ...version,
  created_date: createdAt
})

/** Where an area reads a body's versions: its repository, and its refusals. */
export interface VersionReads<Summary, Version, NotFound, VersionNotFound, R> {
  /** The company's body of `id`, failing with the area's 404 when there is none. */
  readonly find: (companyId: string, id: string) => Effect.Effect<unknown, NotFound, R>
  readonly versions: (
    companyId: string,
    id: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<Summary>; readonly total: number }, never, R>
  readonly version: (companyId: string, id: string, version: number) => Effect.Effect<Option.Option<Version>, never, R>
  readonly versionNotFound: (id: string, version: number) => VersionNotFound
}

/** The reads of a body's versions, each after the body itself is found (another company's body: its 404). */
export const versionReads = <Summary, Version, NotFound, VersionNotFound, R>(
  reads: VersionReads<Summary, Version, NotFound, VersionNotFound, R>
) => ({
  /** A page of the versions, newest first, each answered by `answer`. */
  page: <A>(companyId: string, id: string, request: PageRequest, answer: (summary: Summary) => A) =>
    Effect.gen(function*() {
      yield* reads.find(companyId, id)
      const { rows, total } = yield* reads.versions(companyId, id, windowOf(request))
      return toPage(rows.map(answer), total, request)
    }),
  /** One version with its body; an unknown one fails with the area's `versionNotFound`. */
  find: (companyId: string, id: string, version: number) =>
    Effect.gen(function*() {
      yield* reads.find(companyId, id)
      return yield* Effect.flatMap(reads.version(companyId, id, version), orRefuse(() => reads.versionNotFound(id, version)))
    })
})
