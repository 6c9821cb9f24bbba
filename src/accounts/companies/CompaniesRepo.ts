import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { CompanyRole } from "../../auth/Roles.ts"
import { newId } from "../../platform/Ids.ts"
import { CompanyRole as CompanyRoleSchema } from "../../platform/Schemas.ts"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { containing, jsonParam, toNumber } from "../../storage/Rows.ts"

export const Company = Schema.Struct({
  id: Schema.String,
  organizationId: Schema.String,
  name: Schema.String,
  /** Made from the name when the company is created (sql/0210_landing_pages.sql); landing pages' public URLs use it. */
  slug: Schema.String,
  createdAt: Timestamp
})
export type Company = typeof Company.Type

export const CompanyUserRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  userId: Schema.String,
  role: CompanyRoleSchema,
  allowedFeatures: Schema.Array(Schema.String),
  createdAt: Timestamp
})
export type CompanyUserRecord = typeof CompanyUserRecord.Type

/** A company user with the person's profile, as listings show it. */
export const CompanyUserView = Schema.Struct({
  ...CompanyUserRecord.fields,
  email: Schema.String,
  displayName: Schema.String,
  photo: Schema.String
})
export type CompanyUserView = typeof CompanyUserView.Type

const CompanyRow = fromColumns(Company)
const CompanyUserRow = fromColumns(CompanyUserView)
/** A page's row carries the count of all matching rows. */
const CompanyUserPageRow = fromColumns(Schema.Struct({ ...CompanyUserView.fields, total: NumberColumn }))

export interface CompanyUserQuery {
  readonly search?: string | undefined
  readonly offset: number
  readonly limit: number
}

export interface CompanyUserChange {
  readonly role?: CompanyRole | undefined
  readonly allowedFeatures?: ReadonlyArray<string> | undefined
}

/** Companies and the people who work in them (company users). */
export interface CompaniesRepository {
  readonly create: (input: { readonly organizationId: string; readonly name: string }) => Effect.Effect<Company>
  readonly get: (id: string) => Effect.Effect<Option.Option<Company>>
  readonly listForUser: (userId: string) => Effect.Effect<ReadonlyArray<Company>>
  readonly countInOrganization: (organizationId: string) => Effect.Effect<number>
  /** None when the user already belongs to the company. */
  readonly addUser: (input: {
    readonly companyId: string
    readonly userId: string
    readonly role: CompanyRole
    readonly allowedFeatures?: ReadonlyArray<string> | undefined
  }) => Effect.Effect<Option.Option<CompanyUserView>>
  readonly getUser: (companyId: string, userId: string) => Effect.Effect<Option.Option<CompanyUserView>>
  /** Ordered by creation; `search` matches display name or email, case-insensitively. */
  readonly listUsers: (
    companyId: string,
    query: CompanyUserQuery
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<CompanyUserView>; readonly total: number }>
  readonly updateUser: (
    companyId: string,
    userId: string,
    change: CompanyUserChange
  ) => Effect.Effect<Option.Option<CompanyUserView>>
  readonly removeUser: (companyId: string, userId: string) => Effect.Effect<boolean>
  readonly countOwners: (companyId: string) => Effect.Effect<number>
}

export class CompaniesRepo extends Context.Service<CompaniesRepo, CompaniesRepository>()("companies/CompaniesRepo") {
  static readonly layer = Layer.effect(CompaniesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const companies = readerOf(CompanyRow)
    const companyUsers = readerOf(CompanyUserRow)
    const companyUserPages = readerOf(CompanyUserPageRow)
    const viewSelect = sql`
      SELECT cu.*, u.email, u.display_name, u.photo FROM company_users cu JOIN users u ON u.id = cu.user_id`
    const getUser = (companyId: string, userId: string) =>
      companyUsers.first(sql`${viewSelect} WHERE cu.company_id = ${companyId} AND cu.user_id = ${userId}`)
    const searchFilter = (companyId: string, search: string | undefined) =>
      search === undefined || search === ""
        ? sql`cu.company_id = ${companyId}`
        : sql`cu.company_id = ${companyId} AND (u.display_name ILIKE ${containing(search)} OR u.email ILIKE ${
          containing(search)
        })`
    return {
      create: Effect.fn("CompaniesRepo.create")(function*(input) {
        return yield* companies.one(sql`
          INSERT INTO companies (id, organization_id, name) VALUES (${newId("cmp")}, ${input.organizationId}, ${input.name})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("CompaniesRepo.get")(function*(id) {
        return yield* companies.first(sql`SELECT * FROM companies WHERE id = ${id}`)
      }, Effect.orDie),
      listForUser: Effect.fn("CompaniesRepo.listForUser")(function*(userId) {
        return yield* companies.all(sql`
          SELECT c.* FROM companies c JOIN company_users cu ON cu.company_id = c.id
          WHERE cu.user_id = ${userId} ORDER BY c.id`)
      }, Effect.orDie),
      countInOrganization: Effect.fn("CompaniesRepo.countInOrganization")(function*(organizationId) {
        const rows = yield* sql<{ readonly count: unknown }>`
          SELECT count(*) AS count FROM companies WHERE organization_id = ${organizationId}`
        return toNumber(rows[0].count)
      }, Effect.orDie),
      addUser: Effect.fn("CompaniesRepo.addUser")(function*(input) {
        const inserted = yield* sql`
          INSERT INTO company_users (id, company_id, user_id, role, allowed_features)
          VALUES (${newId("cu")}, ${input.companyId}, ${input.userId}, ${input.role},
            ${jsonParam(input.allowedFeatures ?? [])}::jsonb)
          ON CONFLICT DO NOTHING RETURNING id`
        return inserted.length === 0 ? Option.none() : yield* getUser(input.companyId, input.userId)
      }, Effect.orDie),
      getUser: Effect.fn("CompaniesRepo.getUser")((companyId: string, userId: string) => getUser(companyId, userId), Effect.orDie),
      listUsers: Effect.fn("CompaniesRepo.listUsers")(function*(companyId, query) {
        const where = searchFilter(companyId, query.search)
        // One query for the page and the total; only a page past the end needs a separate count.
        const rows = yield* companyUserPages.all(sql`
          SELECT cu.*, u.email, u.display_name, u.photo, count(*) OVER () AS total
          FROM company_users cu JOIN users u ON u.id = cu.user_id
          WHERE ${where} ORDER BY cu.id LIMIT ${query.limit} OFFSET ${query.offset}`)
        if (rows.length > 0 || query.offset === 0) {
          return { rows: rows.map(({ total: _, ...view }) => view), total: rows[0]?.total ?? 0 }
        }
        const count = yield* sql<{ readonly count: unknown }>`
          SELECT count(*) AS count FROM company_users cu JOIN users u ON u.id = cu.user_id WHERE ${where}`
        return { rows: [], total: toNumber(count[0].count) }
      }, Effect.orDie),
      updateUser: Effect.fn("CompaniesRepo.updateUser")(function*(companyId, userId, change) {
        yield* sql`
          UPDATE company_users SET
            role = coalesce(${change.role ?? null}, role),
            allowed_features = coalesce(${
          change.allowedFeatures === undefined ? null : jsonParam(change.allowedFeatures)
        }::jsonb, allowed_features)
          WHERE company_id = ${companyId} AND user_id = ${userId}`
        return yield* getUser(companyId, userId)
      }, Effect.orDie),
      removeUser: Effect.fn("CompaniesRepo.removeUser")(function*(companyId, userId) {
        const rows = yield* sql`DELETE FROM company_users WHERE company_id = ${companyId} AND user_id = ${userId} RETURNING id`
        return rows.length > 0
      }, Effect.orDie),
      countOwners: Effect.fn("CompaniesRepo.countOwners")(function*(companyId) {
        const rows = yield* sql<{ readonly count: unknown }>`
          SELECT count(*) AS count FROM company_users WHERE company_id = ${companyId} AND role = 'owner'`
        return toNumber(rows[0].count)
      }, Effect.orDie)
    }
  }))
}
