import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { requireCompany } from "../auth/Authentication.ts"
import { authorize, authorizeInOrganization } from "../auth/Policy.ts"
import { Api } from "../app/Api.ts"
import { pageRequest, toPage } from "../platform/Pagination.ts"
import { toCompanyUser } from "./Api.ts"
import * as Companies from "./Companies.ts"
import type { Company } from "./CompaniesRepo.ts"

const companyResource = (company: Company) => ({
  id: company.id,
  name: company.name,
  organizationId: company.organizationId,
  createdDate: company.createdAt
})

export const CompanyUsersLive = HttpApiBuilder.group(Api, "companyUsers", (handlers) =>
  handlers
    .handle("list", ({ params, query }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        authorize("companyUsers:read")(
          Companies.listCompanyUsers(pageRequest(query), query.search)
        )
      ))
    .handle("add", ({ params, payload }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        authorize("companyUsers:manage")(Effect.map(Companies.addCompanyUser(payload), toCompanyUser))
      ))
    .handle("update", ({ params, payload }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        authorize("companyUsers:manage")(Effect.map(Companies.updateCompanyUser(params.userId, payload), toCompanyUser))
      ))
    .handle("remove", ({ params }) =>
      Effect.andThen(
        requireCompany(params.companyId),
        authorize("companyUsers:manage")(Effect.map(Companies.removeCompanyUser(params.userId), toCompanyUser))
      )))

export const CompaniesLive = HttpApiBuilder.group(Api, "companies", (handlers) =>
  handlers
    .handle("list", ({ query }) =>
      Effect.map(Companies.listCallerCompanies(), (companies) => {
        const request = pageRequest(query)
        const start = (request.page - 1) * request.pageSize
        return toPage(companies.slice(start, start + request.pageSize).map(companyResource), companies.length, request)
      }))
    .handle("create", ({ payload }) =>
      authorizeInOrganization("companies:create", payload.organizationId)(
        Effect.map(Companies.createCompany(payload.organizationId, payload.name), companyResource)
      )))
