import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageNumber, PageQuery, PageSize } from "../../platform/Pagination.ts"
import { CompanyRole, Email, IsoDate, NonEmpty } from "../../platform/Schemas.ts"
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
export class CompanyUsersApi extends HttpApiGroup.make("companyUsers")
  .annotateMerge(OpenApi.annotations({
    description: "The people of a company, with their roles and allowed features.",
    override: { "x-displayName": "Company users" }
  })).add(
  HttpApiEndpoint.get("list", "/company_users/:companyId", {
    params: { companyId: Schema.String },
    query: {
      page: Schema.optional(PageNumber),
      pageSize: Schema.optional(PageSize(50)),
      search: Schema.optional(Schema.String.check(Schema.isMaxLength(200)))
    },
    success: CompanyUserList,
    error: errors
  }).pipe(described({
    summary: "List a company's users",
    does: "The company's people with roles and allowed features, paginated.",
    who: "companyUsers:read"
  })),
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
  }).pipe(described({
    summary: "Add a user to the company",
    does: "Adds an existing user (by email) with a role and optional allowed features.",
    who: "companyUsers:manage",
    errors: { 400: "naming the invalid field or an unknown email", 403: "for other roles", 404: "for another company" }
  })),
  HttpApiEndpoint.patch("update", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    payload: Schema.Struct({ role: Schema.optional(CompanyRole), allowedFeatures: Schema.optional(Features) }),
    success: CompanyUser,
    error: errors
  }).pipe(described({
    summary: "Change a company user",
    does: "Changes a company user's role or allowed features; takes effect on their next request.",
    who: "companyUsers:manage",
    errors: { 403: "for other roles", 404: "for an unknown user or another company" }
  })),
  HttpApiEndpoint.delete("remove", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    success: CompanyUser,
    error: errors
  }).pipe(described({
    summary: "Remove a user from the company",
    does: "Removes a person from the company; their personal access key stops reaching it on the next request. Answers the removed company user.",
    who: "companyUsers:manage",
    errors: { 403: "for other roles", 404: "for an unknown user or another company" }
  }))
).middleware(Authentication).prefix("/api/v0") {}

export const CompanyResource = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  organizationId: Schema.String,
  /** Unique, made from the name at creation and kept: landing pages are public at `/p/{slug}/{pageSlug}`. */
  slug: Schema.String,
  createdDate: IsoDate
}).annotate({ identifier: "Company" })

/** The caller's companies, and new companies in an organization. */
export class CompaniesApi extends HttpApiGroup.make("companies")
  .annotateMerge(OpenApi.annotations({
    description: "Companies of the organizations the caller belongs to.",
    override: { "x-displayName": "Companies" }
  })).add(
  HttpApiEndpoint.get("list", "/companies", { query: PageQuery, success: Page(CompanyResource), error: errors }).pipe(described({
    summary: "List companies",
    does: "The companies the caller can reach, paginated: a company key sees its company, a person the companies they belong to.",
    who: "anyKey"
  })),
  HttpApiEndpoint.post("create", "/companies", {
    payload: Schema.Struct({ organizationId: NonEmpty, name: NonEmpty }),
    success: CompanyResource.pipe(HttpApiSchema.status(201)),
    error: errors
  }).pipe(described({
    summary: "Create a company",
    does: "Creates a company in an organization, within its company limit; the calling user becomes its owner.",
    who: "companies:create",
    errors: { 403: "for other organization roles or at the company limit", 404: "for an organization the caller is not in" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
