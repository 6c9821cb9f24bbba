import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { Page, PageNumber, PageQuery, PageSize } from "../platform/Pagination.ts"
import { CompanyRole, Email, IsoDate, NonEmpty } from "../platform/Schemas.ts"
import type { CompanyUserView } from "./CompaniesRepo.ts"

/** The spec's Company user. */
export const CompanyUser = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  uid: Schema.String,
  email: Schema.String,
  role: CompanyRole,
  displayName: Schema.String,
  photo: Schema.String,
  allowedFeatures: Schema.Array(Schema.String),
  createdDate: Schema.String
}).annotate({ identifier: "CompanyUser" })

export const toCompanyUser = (view: CompanyUserView): typeof CompanyUser.Type => ({
  id: view.id,
  companyId: view.companyId,
  uid: view.userId,
  email: view.email,
  role: view.role,
  displayName: view.displayName,
  photo: view.photo,
  allowedFeatures: view.allowedFeatures,
  createdDate: view.createdAt.toISOString()
})

export const CompanyUserList = Schema.Struct({
  company_users: Schema.Array(CompanyUser),
  pagination: Schema.Struct({
    page: Schema.Int,
    per_page: Schema.Int,
    total: Schema.Int,
    pages: Schema.Int,
    has_next: Schema.Boolean,
    has_prev: Schema.Boolean
  })
}).annotate({ identifier: "CompanyUserList" })

const errors = [BadRequest, Forbidden, NotFound]

const Features = Schema.Array(NonEmpty)

/** The people of a company, with their roles and allowed features. */
export class CompanyUsersApi extends HttpApiGroup.make("companyUsers").add(
  HttpApiEndpoint.get("list", "/company_users/:companyId", {
    params: { companyId: Schema.String },
    query: {
      page: Schema.optional(PageNumber),
      pageSize: Schema.optional(PageSize(50)),
      search: Schema.optional(Schema.String.check(Schema.isMaxLength(200)))
    },
    success: CompanyUserList,
    error: errors
  }),
  HttpApiEndpoint.post("add", "/company_users/:companyId", {
    params: { companyId: Schema.String },
    payload: Schema.Struct({
      email: Email,
      role: CompanyRole,
      displayName: Schema.optional(Schema.String.check(Schema.isMaxLength(200))),
      allowedFeatures: Schema.optional(Features)
    }),
    success: CompanyUser.pipe(HttpApiSchema.status(201)),
    error: errors
  }),
  HttpApiEndpoint.patch("update", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    payload: Schema.Struct({ role: Schema.optional(CompanyRole), allowedFeatures: Schema.optional(Features) }),
    success: CompanyUser,
    error: errors
  }),
  HttpApiEndpoint.delete("remove", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    success: CompanyUser,
    error: errors
  })
).middleware(Authentication).prefix("/api/v0") {}

export const CompanyResource = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  organizationId: Schema.String,
  createdDate: IsoDate
}).annotate({ identifier: "Company" })

/** The caller's companies, and new companies in an organization. */
export class CompaniesApi extends HttpApiGroup.make("companies").add(
  HttpApiEndpoint.get("list", "/companies", { query: PageQuery, success: Page(CompanyResource), error: errors }),
  HttpApiEndpoint.post("create", "/companies", {
    payload: Schema.Struct({ organizationId: NonEmpty, name: NonEmpty }),
    success: CompanyResource.pipe(HttpApiSchema.status(201)),
    error: errors
  })
).middleware(Authentication).prefix("/api/v0") {}
