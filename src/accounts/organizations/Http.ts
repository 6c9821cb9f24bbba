import { Effect } from "effect"
import { OrganizationsApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { authorizeInOrganization } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { pageRequest, toPage } from "../../platform/Pagination.ts"
import * as Usage from "../usage/Usage.ts"
import type { UsageEvent } from "../usage/UsageRepo.ts"
import { listCallersOrganizations } from "./Organizations.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(OrganizationsApi)

const usageEventResource = (event: UsageEvent) => ({
  id: event.id,
  companyId: event.companyId,
  userId: event.userId,
  feature: event.feature,
  model: event.model,
  pool: event.pool,
  credits: event.credits,
  tokens: event.tokens,
  inputTokens: event.inputTokens,
  outputTokens: event.outputTokens,
  createdDate: event.createdAt
})

export const OrganizationsLive = HttpApiBuilder.group(api, "organizations", (handlers) =>
  handlers
    .handle("list", () =>
      Effect.map(listCallersOrganizations, (entries) => ({
        organizations: entries.map(({ organization, role }) => ({
          id: organization.id,
          name: organization.name,
          role,
          subscriptionType: organization.subscriptionType,
          status: organization.status,
          creditLimit: organization.creditLimit,
          creditUsage: organization.creditUsage,
          dataCreditLimit: organization.dataCreditLimit,
          dataCreditUsage: organization.dataCreditUsage,
          seats: organization.seats,
          companyLimit: organization.companyLimit
        }))
      })))
    .handle("usageSummary", ({ params, query }) =>
      answer(authorizeInOrganization("usage:read", params.orgId)(
        Usage.summary(params.orgId, query, { offset: query.offset ?? 0, limit: query.limit ?? 100 })
      )))
    .handle("usageHistory", ({ params, query }) =>
      answer(authorizeInOrganization("usage:read", params.orgId)(
        Effect.map(
          Usage.history(params.orgId, query, pageRequest(query)),
          ({ events, total }) => toPage(events.map(usageEventResource), total, pageRequest(query))
        )
      ))))
