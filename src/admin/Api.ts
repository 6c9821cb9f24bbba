import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "effect/http-api"
import { CreatedKey } from "../keys/Api.ts"
import { BadRequest, NotFound, Unauthorized } from "../platform/Errors.ts"
import { CompanyUser } from "../companies/Api.ts"
import { CompanyRole, Count, Email, FutureDate, Int32Count, IsoDate, NonEmpty, OrganizationRole } from "../platform/Schemas.ts"

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

export class AdminApi extends HttpApiGroup.make("admin").add(
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
  }),
  HttpApiEndpoint.post("createUser", "/users", {
    payload: Schema.Struct({ email: Email, displayName: Schema.optional(Schema.String) }),
    success: AdminUser.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.post("addMember", "/organizations/:orgId/members", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty, role: OrganizationRole }),
    success: Membership.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.put("setOwner", "/organizations/:orgId/owner", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty }),
    success: AdminOrganization,
    error: errors
  }),
  HttpApiEndpoint.post("addOwner", "/organizations/:orgId/owners", {
    params: { orgId: Schema.String },
    payload: Schema.Struct({ userId: NonEmpty }),
    success: AdminOrganization.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.post("createCompany", "/companies", {
    payload: Schema.Struct({ organizationId: NonEmpty, name: NonEmpty }),
    success: AdminCompany.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.post("addCompanyUser", "/companies/:companyId/users", {
    params: { companyId: Schema.String },
    payload: Schema.Struct({
      userId: NonEmpty,
      role: CompanyRole,
      allowedFeatures: Schema.optional(Schema.Array(NonEmpty))
    }),
    success: CompanyUser.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.post("createPersonalAccessKey", "/users/:userId/personal-access-keys", {
    params: { userId: Schema.String },
    payload: Schema.Struct({ name: NonEmpty, expiresAt: Schema.optional(FutureDate) }),
    success: CreatedKey.pipe(created),
    error: errors
  }),
  HttpApiEndpoint.post("bootstrap", "/bootstrap", {
    payload: Schema.Struct({ organization: NonEmpty, company: NonEmpty, email: Email }),
    success: Bootstrapped.pipe(created),
    error: errors
  })
).middleware(AdminAuth).prefix("/api/v0/admin") {}
