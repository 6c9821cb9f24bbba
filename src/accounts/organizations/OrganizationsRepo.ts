import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { OrgRole } from "../../auth/Roles.ts"
import { newId } from "../../platform/Ids.ts"
import { OrganizationRole } from "../../platform/Schemas.ts"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"
import { toNumber } from "../../storage/Rows.ts"

export const OrganizationRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  ownerUserId: Schema.NullOr(Schema.String),
  ownerIds: Schema.Array(Schema.String),
  subscriptionType: Schema.String,
  status: Schema.String,
  creditLimit: NumberColumn,
  creditUsage: NumberColumn,
  dataCreditLimit: NumberColumn,
  dataCreditUsage: NumberColumn,
  seats: NumberColumn,
  companyLimit: NumberColumn,
  createdAt: Timestamp
})
export type OrganizationRecord = typeof OrganizationRecord.Type

const OrganizationRow = fromColumns(OrganizationRecord)
/** An organization with the user's membership role, if any. */
const ReachedRow = fromColumns(Schema.Struct({
  ...OrganizationRecord.fields,
  membershipRole: Schema.NullOr(OrganizationRole)
}))

export interface NewOrganization {
  readonly name: string
  readonly subscriptionType?: string | undefined
  readonly creditLimit?: number | undefined
  readonly dataCreditLimit?: number | undefined
  readonly seats?: number | undefined
  readonly companyLimit?: number | undefined
}

export interface OrganizationWithRole {
  readonly organization: OrganizationRecord
  readonly role: OrgRole
}

/** Organizations, their owner user, owners list and memberships. */
export interface OrganizationsRepository {
  readonly create: (input: NewOrganization) => Effect.Effect<OrganizationRecord>
  readonly get: (id: string) => Effect.Effect<Option.Option<OrganizationRecord>>
  /** None when the organization does not exist. */
  readonly setOwner: (organizationId: string, userId: string) => Effect.Effect<Option.Option<OrganizationRecord>>
  readonly addOwner: (organizationId: string, userId: string) => Effect.Effect<Option.Option<OrganizationRecord>>
  /** Adds or changes a membership; none when the organization does not exist. */
  readonly addMember: (organizationId: string, userId: string, role: OrgRole) => Effect.Effect<Option.Option<void>>
  /**
   * The organizations where the user has an explicit membership or ownership
   * record, with the role resolved by the spec's rule: the membership role,
   * else `owner` for the owner user, else `admin` for the owners list.
   */
  readonly listForUser: (userId: string) => Effect.Effect<ReadonlyArray<OrganizationWithRole>>
  /** The credits and data credits used of each of the organizations (those that exist), by id. */
  readonly creditUsage: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, CreditUsage>>
  /** The user's role in one organization by the same rule; none without a record. */
  readonly roleOf: (organizationId: string, userId: string) => Effect.Effect<Option.Option<OrgRole>>
}

/** What an organization used of each pool: credits (model calls) and data credits (job searches). */
export interface CreditUsage { readonly credits: number; readonly dataCredits: number }

export const resolveRole = (
  membershipRole: OrgRole | undefined,
  organization: Pick<OrganizationRecord, "ownerUserId" | "ownerIds">,
  userId: string
): OrgRole | undefined =>
  membershipRole ?? (organization.ownerUserId === userId
    ? "owner"
    : organization.ownerIds.includes(userId)
    ? "admin"
    : undefined)

export class OrganizationsRepo extends Context.Service<OrganizationsRepo, OrganizationsRepository>()(
  "organizations/OrganizationsRepo"
) {
  static readonly layer = Layer.effect(OrganizationsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const organizations = readerOf(OrganizationRow)
    const reached = readerOf(ReachedRow)
    const select = sql`
      SELECT o.*, coalesce((SELECT array_agg(w.user_id ORDER BY w.user_id) FROM organization_owners w
        WHERE w.organization_id = o.id), '{}') AS owner_ids
      FROM organizations o`
    const get = (id: string) =>
      organizations.first(sql`${select} WHERE o.id = ${id}`)
    const ifExists = <A>(organizationId: string, change: Effect.Effect<A, unknown>) =>
      Effect.flatMap(get(organizationId), Option.match({
        onNone: () => Effect.succeedNone,
        onSome: () => Effect.flatMap(change, () => get(organizationId))
      }))
    return {
      create: Effect.fn("OrganizationsRepo.create")(function*(input) {
        const id = newId("org")
        yield* sql`INSERT INTO organizations ${
          sql.insert({
            id,
            name: input.name,
            subscription_type: input.subscriptionType ?? "free",
            credit_limit: input.creditLimit ?? 0,
            data_credit_limit: input.dataCreditLimit ?? 0,
            seats: input.seats ?? 1,
            company_limit: input.companyLimit ?? 1
          })
        }`
        return Option.getOrThrow(yield* get(id))
      }, Effect.orDie),
      get: Effect.fn("OrganizationsRepo.get")((id: string) => get(id), Effect.orDie),
      setOwner: Effect.fn("OrganizationsRepo.setOwner")(
        (organizationId: string, userId: string) =>
          ifExists(organizationId, sql`UPDATE organizations SET owner_user_id = ${userId} WHERE id = ${organizationId}`),
        Effect.orDie
      ),
      addOwner: Effect.fn("OrganizationsRepo.addOwner")(
        (organizationId: string, userId: string) =>
          ifExists(
            organizationId,
            sql`INSERT INTO organization_owners (organization_id, user_id) VALUES (${organizationId}, ${userId})
              ON CONFLICT DO NOTHING`
          ),
        Effect.orDie
      ),
      addMember: Effect.fn("OrganizationsRepo.addMember")(
        (organizationId: string, userId: string, role: OrgRole) =>
          Effect.map(
            ifExists(
              organizationId,
              sql`INSERT INTO organization_members (organization_id, user_id, role)
                VALUES (${organizationId}, ${userId}, ${role})
                ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role`
            ),
            Option.asVoid
          ),
        Effect.orDie
      ),
      listForUser: Effect.fn("OrganizationsRepo.listForUser")(function*(userId) {
        // Only the user's own records are read (each by an index), never every organization.
        const rows = yield* reached.all(sql`
          WITH reached AS (
            SELECT organization_id AS id FROM organization_members WHERE user_id = ${userId}
            UNION SELECT organization_id FROM organization_owners WHERE user_id = ${userId}
            UNION SELECT id FROM organizations WHERE owner_user_id = ${userId}
          )
          SELECT o.*, m.role AS membership_role FROM (${select} WHERE o.id IN (SELECT id FROM reached)) o
          LEFT JOIN organization_members m ON m.organization_id = o.id AND m.user_id = ${userId}
          ORDER BY o.id`)
        return rows.map(({ membershipRole, ...organization }) => ({
          organization,
          role: resolveRole(membershipRole ?? undefined, organization, userId)!
        }))
      }, Effect.orDie),
      creditUsage: Effect.fn("OrganizationsRepo.creditUsage")(function*(ids) {
        if (ids.length === 0) return new Map()
        const rows = yield* sql<{ readonly id: string; readonly credit_usage: unknown; readonly data_credit_usage: unknown }>`
          SELECT id, credit_usage, data_credit_usage FROM organizations WHERE ${sql.in("id", ids)}`
        return new Map(rows.map((row) => [row.id, { credits: toNumber(row.credit_usage), dataCredits: toNumber(row.data_credit_usage) }]))
      }, Effect.orDie),
      roleOf: Effect.fn("OrganizationsRepo.roleOf")(function*(organizationId, userId) {
        const organization = yield* get(organizationId)
        if (Option.isNone(organization)) return Option.none()
        const membership = yield* sql<{ readonly role: OrgRole }>`
          SELECT role FROM organization_members WHERE organization_id = ${organizationId} AND user_id = ${userId}`
        return Option.fromNullishOr(resolveRole(membership[0]?.role, organization.value, userId))
      }, Effect.orDie)
    }
  }))
}
