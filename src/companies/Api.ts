import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
  }).annotateMerge(OpenApi.annotations({
    summary: "List a company's users",
    description: "The company's people with roles and allowed features, paginated. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, with any company role. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 naming the missing role or feature; 404 for an id of another company; 429 over the rate limit."
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
  }).annotateMerge(OpenApi.annotations({
    summary: "Add a user to the company",
    description: "Adds an existing user (by email) with a role and optional allowed features. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 400 naming the invalid field or an unknown email; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles; 404 for another company."
  })),
  HttpApiEndpoint.patch("update", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    payload: Schema.Struct({ role: Schema.optional(CompanyRole), allowedFeatures: Schema.optional(Features) }),
    success: CompanyUser,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Change a company user",
    description: "Changes a company user's role or allowed features; takes effect on their next request. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles; 404 for an unknown user or another company."
  })),
  HttpApiEndpoint.delete("remove", "/company_users/:companyId/:userId", {
    params: { companyId: Schema.String, userId: Schema.String },
    success: CompanyUser,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Remove a user from the company",
    description: "Removes a person from the company; their personal access key stops reaching it on the next request. Answers the removed company user. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles; 404 for an unknown user or another company."
  }))
).middleware(Authentication).prefix("/api/v0") {}

export const CompanyResource = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  organizationId: Schema.String,
  createdDate: IsoDate
}).annotate({ identifier: "Company" })

/** The caller's companies, and new companies in an organization. */
export class CompaniesApi extends HttpApiGroup.make("companies")
  .annotateMerge(OpenApi.annotations({
    description: "Companies of the organizations the caller belongs to.",
    override: { "x-displayName": "Companies" }
  })).add(
  HttpApiEndpoint.get("list", "/companies", { query: PageQuery, success: Page(CompanyResource), error: errors }).annotateMerge(OpenApi.annotations({
    summary: "List companies",
    description: "The companies the caller can reach, paginated: a company key sees its company, a person the companies they belong to. Who: any valid key. Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 429."
  })),
  HttpApiEndpoint.post("create", "/companies", {
    payload: Schema.Struct({ organizationId: NonEmpty, name: NonEmpty }),
    success: CompanyResource.pipe(HttpApiSchema.status(201)),
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Create a company",
    description: "Creates a company in an organization, within its company limit; the calling user becomes its owner. Who: an organization owner or admin (a personal access key, or a company key whose creator is one). Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other organization roles or at the company limit; 404 for an organization the caller is not in."
  }))
).middleware(Authentication).prefix("/api/v0") {}
