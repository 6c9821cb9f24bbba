import { Effect, Layer, Option, Redacted } from "effect"
import { answer } from "../../http/Refusals.ts"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createHash, timingSafeEqual } from "node:crypto"
import { areaApi } from "../../http/Area.ts"
import type { OrganizationRecord } from "../organizations/OrganizationsRepo.ts"
import { toCompanyUser } from "../companies/Api.ts"
import { AppConfig } from "../../platform/AppConfig.ts"
import { NotFound, Unauthorized } from "../../platform/Errors.ts"
import * as Admin from "./Admin.ts"
import { AdminApi, AdminAuth } from "./Api.ts"

const api = areaApi(AdminApi)

const digest = (value: string) => createHash("sha256").update(value).digest()

export const AdminAuthLive = Layer.effect(AdminAuth, Effect.gen(function*() {
  const { adminApiKey } = yield* AppConfig
  const expected = Option.map(adminApiKey, (key) => digest(Redacted.value(key)))
  return {
    bearer: (handler, { credential }) =>
      Effect.gen(function*() {
        if (Option.isNone(expected)) {
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* new NotFound({ error: `No route for ${request.method} ${request.url.split("?")[0]}` })
        }
        if (!timingSafeEqual(digest(Redacted.value(credential)), expected.value)) {
          return yield* new Unauthorized({ error: "Invalid or missing admin key" })
        }
        return yield* handler
      })
  }
}))

export const adminOrganization = (organization: OrganizationRecord) => ({
  id: organization.id,
  name: organization.name,
  ownerUserId: organization.ownerUserId,
  owners: organization.ownerIds,
  subscriptionType: organization.subscriptionType,
  status: organization.status,
  creditLimit: organization.creditLimit,
  creditUsage: organization.creditUsage,
  dataCreditLimit: organization.dataCreditLimit,
  dataCreditUsage: organization.dataCreditUsage,
  seats: organization.seats,
  companyLimit: organization.companyLimit,
  createdDate: organization.createdAt
})

export const AdminLive = HttpApiBuilder.group(api, "admin", (handlers) =>
  handlers
    .handle("createOrganization", ({ payload }) => answer(Effect.map(Admin.createOrganization(payload), adminOrganization)))
    .handle("createUser", ({ payload }) =>
      answer(Effect.map(Admin.createUser(payload), (user) => ({ id: user.id, email: user.email, displayName: user.displayName }))))
    .handle("addMember", ({ params, payload }) => answer(Admin.addMember(params.orgId, payload.userId, payload.role)))
    .handle("setOwner", ({ params, payload }) => answer(Effect.map(Admin.setOwner(params.orgId, payload.userId), adminOrganization)))
    .handle("addOwner", ({ params, payload }) => answer(Effect.map(Admin.addOwner(params.orgId, payload.userId), adminOrganization)))
    .handle("createCompany", ({ payload }) =>
      answer(Effect.map(Admin.createCompany(payload.organizationId, payload.name), (company) => ({
        id: company.id,
        name: company.name,
        organizationId: company.organizationId
      }))))
    .handle("addCompanyUser", ({ params, payload }) =>
      answer(Effect.map(Admin.addCompanyUser(params.companyId, payload), toCompanyUser)))
    .handle("createPersonalAccessKey", ({ params, payload }) => answer(Admin.createPersonalKey(params.userId, payload)))
    .handle("bootstrap", ({ payload }) => answer(Admin.bootstrap(payload))))
