import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { CreatedKey } from "../keys/Api.ts"
import { BadRequest, NotFound, Unauthorized } from "../../platform/Errors.ts"
import { CompanyUser } from "../companies/Api.ts"
import { CompanyRole, Count, Email, FutureDate, Int32Count, IsoDate, NonEmpty, OrganizationRole } from "../../platform/Schemas.ts"

/** Bearer `ADMIN_API_KEY`; without that setting every admin route answers 404. */
export class AdminAuth extends HttpApiMiddleware.Service<AdminAuth>()("AdminAuth", {
  error: [Unauthorized, NotFound],
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const AdminOrganization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  ownerUserId: Schema.NullOr(Schema.String),
  owners: Schema.Array(Schema.String),
  subscriptionType: Schema.String,
  status: Schema.String,
  creditLimit: Schema.Int,
  creditUsage: Schema.Int,
  dataCreditLimit: Schema.Int,
  dataCreditUsage: Schema.Int,
  seats: Schema.Int,
  companyLimit: Schema.Int,
  createdDate: IsoDate
}).annotate({ identifier: "AdminOrganization" })

export const AdminUser = Schema.Struct({ id: Schema.String, email: Schema.String, displayName: Schema.String })
  .annotate({ identifier: "AdminUser" })

export const Membership = Schema.Struct({ organizationId: Schema.String, userId: Schema.String, role: OrganizationRole })

export const AdminCompany = Schema.Struct({ id: Schema.String, name: Schema.String, organizationId: Schema.String })
  .annotate({ identifier: "AdminCompany" })

export const Bootstrapped = Schema.Struct({
  organizationId: Schema.String,
  companyId: Schema.String,
  userId: Schema.String,
  apiKey: Schema.String,
  personalAccessKey: Schema.String
}).annotate({ identifier: "Bootstrapped" })

const created = HttpApiSchema.status(201)
const errors = [BadRequest, NotFound]

export class AdminApi extends HttpApiGroup.make("admin")
  .annotateMerge(OpenApi.annotations({
    description: "Operator routes to set up organizations, companies, users and keys. They answer **404 unless `ADMIN_API_KEY` is set**; then they need `Authorization: Bearer <ADMIN_API_KEY>` (a wrong key answers 401). Company and personal keys never reach them.",
    override: { "x-displayName": "Operator (admin)" }
  })).add(
  HttpApiEndpoint.post("createOrganization", "/organizations", {
    payload: Schema.Struct({
      name: NonEmpty,
      subscriptionType: Schema.optional(NonEmpty),
      creditLimit: Schema.optional(Count),
      dataCreditLimit: Schema.optional(Count),
      seats: Schema.optional(Int32Count),
      companyLimit: Schema.optional(Int32Count)
    }),
    success: AdminOrganization.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Create an organization",
    does: "Creates an organization. Defaults: plan `free`, 0 credits, 1 seat, 1 company.",
    who: "operator"
  })),
  HttpApiEndpoint.post("createUser", "/users", {
    payload: Schema.Struct({ email: Email, displayName: Schema.optional(Schema.String) }),
    success: AdminUser.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Create a user",
    does: "Creates a person by email (unique).",
    who: "operator",
    errors: { 400: "for an invalid or already used email" }
  })),
  HttpApiEndpoint.post("addMember", "/organizations/:orgId/members", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty, role: OrganizationRole }),
    success: Membership.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Add a member to an organization",
    does: "Gives a user a role (owner, admin, member) in an organization.",
    who: "operator",
    errors: { 400: "when the user is a member already", 404: "unless `ADMIN_API_KEY` is set, or for an unknown organization or user" }
  })),
  HttpApiEndpoint.put("setOwner", "/organizations/:orgId/owner", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty }),
    success: AdminOrganization,
    error: errors
  }).pipe(described({
    summary: "Set an organization's owner",
    does: "Makes a user the organization's owner.",
    who: "operator",
    errors: { 404: "unless `ADMIN_API_KEY` is set, or for an unknown organization or user" }
  })),
  HttpApiEndpoint.post("addOwner", "/organizations/:orgId/owners", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty }),
    success: AdminOrganization.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Add an owner to an organization",
    does: "Adds a user as an owner of an organization.",
    who: "operator",
    errors: { 404: "unless `ADMIN_API_KEY` is set, or for an unknown organization or user" }
  })),
  HttpApiEndpoint.post("createCompany", "/companies", {
    payload: Schema.Struct({ organizationId: NonEmpty, name: NonEmpty }),
    success: AdminCompany.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Create a company",
    does: "Creates a company in an organization, within its company limit.",
    who: "operator",
    errors: { 400: "at the company limit", 404: "unless `ADMIN_API_KEY` is set, or for an unknown organization" }
  })),
  HttpApiEndpoint.post("addCompanyUser", "/companies/:companyId/users", {
    params: { companyId: Schema.String },
    payload: Schema.Struct({
      userId: NonEmpty,
      role: CompanyRole,
      allowedFeatures: Schema.optional(Schema.Array(NonEmpty))
    }),
    success: CompanyUser.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Add a user to a company",
    does: "Adds a user to a company with a role and optional allowed features.",
    who: "operator",
    errors: { 400: "when the user belongs to the company already", 404: "unless `ADMIN_API_KEY` is set, or for an unknown company or user" }
  })),
  HttpApiEndpoint.post("createPersonalAccessKey", "/users/:userId/personal-access-keys", {
    params: { userId: Schema.String },
    payload: Schema.Struct({ name: NonEmpty, expiresAt: Schema.optional(FutureDate) }),
    success: CreatedKey.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Create a personal access key for a user",
    does: "Issues a personal access key for a user; the plaintext `key` is in this answer only.",
    who: "operator",
    errors: { 404: "unless `ADMIN_API_KEY` is set, or for an unknown user" }
  })),
  HttpApiEndpoint.post("bootstrap", "/bootstrap", {
    payload: Schema.Struct({ organization: NonEmpty, company: NonEmpty, email: Email }),
    success: Bootstrapped.pipe(created),
    error: errors
  }).pipe(described({
    summary: "Create a tenant in one call",
    does: "Creates an organization (plan `pro` with starting credits), a company, its owner (or reuses the user with that email) and a company API key and a personal access key, answered in plaintext once.",
    who: "operator"
  }))
).middleware(AdminAuth).prefix("/api/v0/admin") {}
