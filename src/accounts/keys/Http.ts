import { Effect } from "effect"
import { answer } from "../../http/Refusals.ts"
import { ApiKeysApi, KeysApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { requireCompany } from "../../auth/Authentication.ts"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import * as Keys from "./Keys.ts"
import type { CompanyApiKey, PersonalAccessKey } from "./KeysRepo.ts"

const api = areaApi(ApiKeysApi, KeysApi)

const personalKeySummary = (key: PersonalAccessKey) => ({
  id: key.id,
  name: key.name,
  maskedKey: key.masked,
  expiresAt: key.expiresAt,
  createdDate: key.createdAt
})

const companyKeySummary = (key: CompanyApiKey) => ({
  id: key.id,
  companyId: key.companyId,
  createdByUserId: key.createdByUserId,
  name: key.name,
  maskedKey: key.masked,
  createdDate: key.createdAt
})

const manage = authorize("apiKeys:manage")

/** Runs `effect` for the company the client named, with the key-management permission. */
const inCompany = <A, E, R>(companyId: string | undefined, effect: Effect.Effect<A, E, R>) =>
  answer(Effect.andThen(requireCompany(companyId), manage(effect)))

export const ApiKeysLive = HttpApiBuilder.group(api, "apiKeys", (handlers) =>
  handlers
    .handle("get", ({ query }) =>
      inCompany(query.companyId, Effect.map(Keys.defaultCompanyKey(), (key) => ({ apiKey: key.masked }))))
    .handle("create", ({ payload }) =>
      inCompany(payload.companyId, Effect.map(Keys.createCompanyKey(payload.name), ({ plaintext }) => ({ apiKey: plaintext }))))
    .handle("getByName", ({ params }) =>
      inCompany(params.companyId, Effect.map(Keys.companyKeyByName(params.name), (key) => ({ apiKey: key.masked }))))
    .handle("ensure", ({ payload }) =>
      inCompany(payload.companyId, Effect.map(Keys.ensureCompanyKey(payload.name), (apiKey) => ({ apiKey }))))
    .handle("delete", ({ payload }) =>
      inCompany(payload.companyId, Effect.map(Keys.deleteCompanyKey(payload.name), (key) => ({ apiKey: key.masked })))))

export const KeysLive = HttpApiBuilder.group(api, "keys", (handlers) =>
  handlers
    .handle("list", () =>
      Effect.map(Keys.listCallerKeys(), (listing) => ({
        personalAccessKeys: listing.personalAccessKeys.map(personalKeySummary),
        companyKeys: listing.companyKeys.map(companyKeySummary)
      })))
    .handle("create", ({ payload }) =>
      answer(Effect.map(Keys.createOwnPersonalKey(payload.name, payload.expiresAt ?? null), ({ key, plaintext }) => ({
        id: key.id,
        name: key.name,
        key: plaintext,
        expiresAt: key.expiresAt
      }))))
    .handle("revoke", ({ params }) => answer(Effect.map(Keys.revokeOwnPersonalKey(params.keyId), personalKeySummary))))
