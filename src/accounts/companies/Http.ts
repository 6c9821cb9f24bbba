import { Context, Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { requireCompany } from "../../auth/Authentication.ts"
import { authorize, authorizeInOrganization } from "../../auth/Policy.ts"
import { type RevisionCache, revisionCacheLayer } from "../../auth/RevisionCache.ts"
import { jsonResponse } from "../../http/JsonResponses.ts"
import { areaApi } from "../../http/Area.ts"
import { pageRequest, toPage } from "../../platform/Pagination.ts"
import { CompaniesApi, CompanyUserList, CompanyUsersApi, toCompanyUser } from "./Api.ts"
import * as Companies from "./Companies.ts"
import type { Company } from "./CompaniesRepo.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(CompanyUsersApi, CompaniesApi)

/**
 * Pages of a company's users (without a search), answered whole, per
 * process, at the access revision they were read at (`RevisionCache`): adding,
 * changing or removing a company user bumps it, and the users' profiles they
 * show never change. Searches are not cached: they are rarer, and each would
 * take a page of the cache.
 */
export class CompanyUsersCache extends Context.Service<CompanyUsersCache, RevisionCache<HttpServerResponse.HttpServerResponse>>()(
  "companies/CompanyUsersCache"
) {
  /** Pages kept: at most 50 users each, a few hundred bytes per user. */
  static readonly capacity = 1_000
  static readonly layer = revisionCacheLayer(CompanyUsersCache, CompanyUsersCache.capacity)
}

const companyUserListResponse = jsonResponse(CompanyUserList)

const listCompanyUsers = (companyId: string, query: { readonly page?: number; readonly pageSize?: number; readonly search?: string }) => {
  const request = pageRequest(query)
  const read = () => Effect.flatMap(Companies.listCompanyUsers(request, query.search), companyUserListResponse)
  if (query.search !== undefined && query.search !== "") return read()
  return CompanyUsersCache.use((cache) => cache.through(`${companyId}\u0000${request.page}\u0000${request.pageSize}`, read))
}

const companyResource = (company: Company) => ({
  id: company.id,
  name: company.name,
  organizationId: company.organizationId,
  slug: company.slug,
  createdDate: company.createdAt
})

export const CompanyUsersLive = HttpApiBuilder.group(api, "companyUsers", (handlers) =>
  handlers
    .handle("list", ({ params, query }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        answer(authorize("companyUsers:read")(listCompanyUsers(params.companyId, query)))
      ))
    .handle("add", ({ params, payload }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        answer(authorize("companyUsers:manage")(Effect.map(Companies.addCompanyUser(payload), toCompanyUser)))
      ))
    .handle("update", ({ params, payload }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        answer(authorize("companyUsers:manage")(Effect.map(Companies.updateCompanyUser(params.userId, payload), toCompanyUser)))
      ))
    .handle("remove", ({ params }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        answer(authorize("companyUsers:manage")(Effect.map(Companies.removeCompanyUser(params.userId), toCompanyUser)))
      )))

export const CompaniesLive = HttpApiBuilder.group(api, "companies", (handlers) =>
  handlers
    .handle("list", ({ query }) =>
      Effect.map(Companies.listCallerCompanies(), (companies) => {
        const request = pageRequest(query)
        const start = (request.page - 1) * request.pageSize
        return toPage(companies.slice(start, start + request.pageSize).map(companyResource), companies.length, request)
      }))
    .handle("create", ({ payload }) =>
      answer(authorizeInOrganization("companies:create", payload.organizationId)(
        Effect.map(Companies.createCompany(payload.organizationId, payload.name), companyResource)
      ))))
