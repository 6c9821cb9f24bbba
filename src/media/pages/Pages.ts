import { Effect, Option } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { changing } from "../../auth/AccessRevision.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { brandGuide } from "../../work/brand/BrandGuide.ts"
import { answeredVersion, type BodyDocument, versionReads } from "../../http/BodyVersions.ts"
import { CompaniesRepo } from "../../accounts/companies/CompaniesRepo.ts"
import { AppConfig } from "../../platform/AppConfig.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import type { VersionSource } from "../../storage/BodyVersions.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { LandingPage, LandingPagePatch, LandingPageVersion, NewLandingPage, PageStatus } from "./Api.ts"
import { PageNotFound, PageVersionNotFound, SlugTaken } from "./Errors.ts"
import { type PageRecord, PagesRepo, type PageWithCompany } from "./PagesRepo.ts"
import { dayOf, PageTraffic } from "./PageTraffic.ts"
import { render } from "./Rendering.ts"

/**
 * Landing pages: a versioned body like a campaign's, published at
 * `/p/{companySlug}/{slug}`. Every change goes through `change`, which
 * renders the page as it will be served in the same transaction, so the
 * served document always matches the stored body. Decisions in
 * docs/landing-pages.md.
 */

/** The page's public path. */
export const publicPath = (companySlug: string, slug: string) => `/p/${companySlug}/${slug}`

const toLandingPage = (page: PageWithCompany, baseUrl: string): typeof LandingPage.Type => ({
  id: page.id,
  companyId: page.companyId,
  userId: page.userId,
  name: page.name,
  slug: page.slug,
  status: page.status,
  bodyDocument: page.bodyDocument,
  bodyVersion: page.bodyVersion,
  thankYouUrl: page.thankYouUrl,
  url: page.status === "published" ? `${baseUrl}${publicPath(page.companySlug, page.slug)}` : null,
  publishedAt: page.publishedAt,
  created_date: page.createdAt,
  updated_date: page.updatedAt
})

const answered = (page: PageWithCompany) => AppConfig.useSync((config) => toLandingPage(page, config.publicBaseUrl))

/** The company's page, or 404; `forUpdate` locks it for the transaction. */
export const find = (companyId: string, id: string, forUpdate = false) =>
  Effect.flatMap(PagesRepo.use((repo) => repo.get(companyId, id, forUpdate)), orRefuse(() => new PageNotFound({ id })))

/** The served document of `page` as it is (or is about to be) stored. */
const withServed = (page: Omit<PageRecord, "servedHtml" | "servedEtag">, companySlug: string) =>
  Effect.map(brandGuide(page.companyId), (brand): PageRecord => ({
    ...page,
    ...render({
      title: page.name,
      html: page.bodyDocument.html,
      css: typeof page.bodyDocument.css === "string" ? page.bodyDocument.css : "",
      brandCss: brand.css,
      submitPath: `${publicPath(companySlug, page.slug)}/submit`
    })
  }))

/** What a change sets; undefined leaves a field. A body becomes the next version, saved from `source`. */
interface PageChange {
  readonly name?: string | undefined
  readonly slug?: string | undefined
  readonly status?: PageStatus | undefined
  readonly thankYouUrl?: string | null | undefined
  readonly body?: { readonly document: BodyDocument; readonly source: VersionSource } | undefined
}

const statusFields = (page: PageRecord, status: PageStatus | undefined, now: Date) =>
  status === undefined || status === page.status
    ? {}
    : { status, publishedAt: status === "published" ? now : null }

/**
 * Applies `change` to the company's page in one transaction: the row is
 * locked, the page re-rendered as it will be served, written with its new
 * version if the body changed. The one way a page changes; it bumps the
 * access revision, so no process serves the page as it was from its cache.
 */
const change = (companyId: string, id: string, edit: PageChange) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const saved = yield* changing(sql.withTransaction(Effect.gen(function*() {
      const { companySlug, ...page } = yield* find(companyId, id, true)
      const now = yield* currentDate
      const next = yield* withServed({
        ...page,
        name: edit.name ?? page.name,
        slug: edit.slug ?? page.slug,
        thankYouUrl: edit.thankYouUrl === undefined ? page.thankYouUrl : edit.thankYouUrl,
        ...statusFields(page, edit.status, now),
        ...(edit.body === undefined ? {} : { bodyDocument: edit.body.document, bodyVersion: page.bodyVersion + 1 })
      }, companySlug)
      const written = yield* PagesRepo.use((repo) => repo.write({ page: next, newVersion: edit.body?.source }, now))
      if (written === "slugTaken") return yield* new SlugTaken({ slug: next.slug })
      return { ...written, companySlug }
    }))).pipe(Effect.catchIf(SqlError.isSqlError, Effect.die))
    return saved
  })

/** Saves `document` as the page's next body version: what PATCH, restore and the design chat do. */
export const saveBody = (companyId: string, id: string, document: BodyDocument, source: VersionSource) =>
  change(companyId, id, { body: { document, source } })

export const create = Effect.fn("Pages.create")(function*(input: typeof NewLandingPage.Type) {
  yield* Authorized("landingPages:write")
  const principal = yield* requireCompany(input.companyId)
  const company = yield* Effect.map(CompaniesRepo.use((repo) => repo.get(principal.companyId)), Option.getOrThrow)
  const now = yield* currentDate
  const page = yield* withServed({
    id: newId("lpg"),
    companyId: principal.companyId,
    userId: principal.userId,
    name: input.name,
    slug: input.slug,
    status: input.status ?? "draft",
    bodyDocument: input.bodyDocument ?? { html: "" },
    bodyVersion: input.bodyDocument === undefined ? 0 : 1,
    thankYouUrl: input.thankYouUrl ?? null,
    publishedAt: input.status === "published" ? now : null,
    createdAt: now,
    updatedAt: now
  }, company.slug)
  const created = yield* PagesRepo.use((repo) => repo.create(page, "api"))
  if (created === "slugTaken") return yield* new SlugTaken({ slug: input.slug })
  return yield* answered({ ...created, companySlug: company.slug })
})

export const list = Effect.fn("Pages.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("landingPages:read")
  const { rows, total } = yield* PagesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(yield* Effect.forEach(rows, answered), total, request)
})

export const get = Effect.fn("Pages.get")(function*(id: string) {
  const { principal } = yield* Authorized("landingPages:read")
  return yield* answered(yield* find(principal.companyId, id))
})

export const update = Effect.fn("Pages.update")(function*(id: string, patch: typeof LandingPagePatch.Type) {
  yield* Authorized("landingPages:write")
  const principal = yield* requireCompany(patch.companyId)
  const { companyId: _, bodyDocument, ...fields } = patch
  const body = bodyDocument === undefined ? undefined : { document: bodyDocument, source: "api" as const }
  return yield* answered(yield* change(principal.companyId, id, { ...fields, body }))
})

/** Publishes or unpublishes the page. */
export const setStatus = Effect.fn("Pages.setStatus")(function*(
  id: string,
  status: PageStatus,
  body: { readonly companyId?: string | undefined } | null
) {
  yield* Authorized("landingPages:write")
  const principal = yield* requireCompany(body?.companyId)
  return yield* answered(yield* change(principal.companyId, id, { status }))
})

export const remove = Effect.fn("Pages.remove")(function*(id: string) {
  const { principal } = yield* Authorized("landingPages:write")
  const page = yield* find(principal.companyId, id)
  yield* Effect.flatMap(changing(PagesRepo.use((repo) => repo.remove(principal.companyId, id))), orRefuse(() => new PageNotFound({ id })))
  return yield* answered(page)
})

const { page: versionPage, find: findVersion } = versionReads({
  find,
  versions: (_, id, window) => PagesRepo.use((repo) => repo.versions(id, window)),
  version: (_, id, version) => PagesRepo.use((repo) => repo.version(id, version)),
  versionNotFound: (id, version) => new PageVersionNotFound({ id, version })
})

export const listVersions = Effect.fn("Pages.listVersions")(function*(id: string, request: PageRequest) {
  const { principal } = yield* Authorized("landingPages:read")
  return yield* versionPage(principal.companyId, id, request, answeredVersion)
})

export const getVersion = Effect.fn("Pages.getVersion")(function*(id: string, version: number) {
  const { principal } = yield* Authorized("landingPages:read")
  return answeredVersion(yield* findVersion(principal.companyId, id, version)) satisfies typeof LandingPageVersion.Type
})

export const restoreVersion = Effect.fn("Pages.restoreVersion")(function*(
  id: string,
  version: number,
  body: { readonly companyId?: string | undefined } | null
) {
  yield* Authorized("landingPages:write")
  const principal = yield* requireCompany(body?.companyId)
  const found = yield* findVersion(principal.companyId, id, version)
  return yield* answered(yield* saveBody(principal.companyId, id, found.bodyDocument, "restore"))
})

const dayMillis = 86_400_000

/** The page's traffic over the last `days` UTC days (today included), every day listed. */
export const stats = Effect.fn("Pages.stats")(function*(id: string, days: number) {
  const { principal } = yield* Authorized("landingPages:read")
  yield* find(principal.companyId, id)
  const traffic = yield* PageTraffic
  yield* traffic.flush
  const today = (yield* currentDate).getTime()
  const dates = Array.from({ length: days }, (_, index) => dayOf(new Date(today - (days - 1 - index) * dayMillis)))
  const counted = new Map((yield* traffic.days(id, dates[0]!, dates.at(-1)!)).map((row) => [row.day, row]))
  const perDay = dates.map((date) => ({
    date,
    views: counted.get(date)?.views ?? 0,
    uniqueVisitors: counted.get(date)?.uniqueVisitors ?? 0,
    submissions: counted.get(date)?.submissions ?? 0
  }))
  const total = (field: "views" | "uniqueVisitors" | "submissions") => perDay.reduce((sum, day) => sum + day[field], 0)
  const uniqueVisitors = total("uniqueVisitors")
  const submissions = total("submissions")
  return {
    views: total("views"),
    uniqueVisitors,
    submissions,
    conversionRate: uniqueVisitors === 0 ? 0 : submissions / uniqueVisitors,
    perDay
  }
})
