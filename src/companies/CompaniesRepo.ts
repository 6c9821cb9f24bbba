import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { CompanyRole } from "../auth/Roles.ts"
import { newId } from "../platform/Ids.ts"
import { containing, jsonParam, toNumber } from "../storage/Rows.ts"


export interface Company {
  readonly id: string
  readonly organizationId: string
  readonly name: string
  readonly createdAt: Date
}

export interface CompanyUserRecord {
  readonly id: string
  readonly companyId: string
  readonly userId: string
  readonly role: CompanyRole
  readonly allowedFeatures: ReadonlyArray<string>
  readonly createdAt: Date
}

/** A company user with the person's profile, as listings show it. */
export interface CompanyUserView extends CompanyUserRecord {
  readonly email: string
  readonly displayName: string
  readonly photo: string
}

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
    const viewSelect = sql`
      SELECT cu.*, u.email, u.display_name, u.photo FROM company_users cu JOIN users u ON u.id = cu.user_id`
    const getUser = (companyId: string, userId: string) =>
      Effect.map(
        sql<CompanyUserRow>`${viewSelect} WHERE cu.company_id = ${companyId} AND cu.user_id = ${userId}`,
        (rows) => Option.map(Option.fromNullishOr(rows[0]), viewFromRow)
      )
    const searchFilter = (companyId: string, search: string | undefined) =>
      search === undefined || search === ""
        ? sql`cu.company_id = ${companyId}`
        : sql`cu.company_id = ${companyId} AND (u.display_name ILIKE ${containing(search)} OR u.email ILIKE ${
          containing(search)
        })`
    return {
      create: Effect.fn("CompaniesRepo.create")(function*(input) {
        const rows = yield* sql<CompanyRow>`
          INSERT INTO companies (id, organization_id, name) VALUES (${newId("cmp")}, ${input.organizationId}, ${input.name})
          RETURNING *`
        return companyFromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("CompaniesRepo.get")(function*(id) {
        const rows = yield* sql<CompanyRow>`SELECT * FROM companies WHERE id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), companyFromRow)
      }, Effect.orDie),
      listForUser: Effect.fn("CompaniesRepo.listForUser")(function*(userId) {
        const rows = yield* sql<CompanyRow>`
          SELECT c.* FROM companies c JOIN company_users cu ON cu.company_id = c.id
          WHERE cu.user_id = ${userId} ORDER BY c.id`
        return rows.map(companyFromRow)
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
        const rows = yield* sql<CompanyUserRow & { readonly total: unknown }>`
          SELECT cu.*, u.email, u.display_name, u.photo, count(*) OVER () AS total
          FROM company_users cu JOIN users u ON u.id = cu.user_id
          WHERE ${where} ORDER BY cu.id LIMIT ${query.limit} OFFSET ${query.offset}`
        if (rows.length > 0 || query.offset === 0) {
          return { rows: rows.map(viewFromRow), total: toNumber(rows[0]?.total) }
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

interface CompanyRow {
  readonly id: string
  readonly organization_id: string
  readonly name: string
  readonly created_at: Date
}

interface CompanyUserRow {
  readonly id: string
  readonly company_id: string
  readonly user_id: string
  readonly role: CompanyRole
  readonly allowed_features: ReadonlyArray<string>
  readonly created_at: Date
  readonly email: string
  readonly display_name: string
  readonly photo: string
}

const companyFromRow = (row: CompanyRow): Company => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  createdAt: new Date(row.created_at)
})

const viewFromRow = (row: CompanyUserRow): CompanyUserView => ({
  id: row.id,
  companyId: row.company_id,
  userId: row.user_id,
  role: row.role,
  allowedFeatures: row.allowed_features,
  createdAt: new Date(row.created_at),
  email: row.email,
  displayName: row.display_name,
  photo: row.photo
})
