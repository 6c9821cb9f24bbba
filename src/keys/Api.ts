import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { FutureDate, IsoDate, NonEmpty } from "../platform/Schemas.ts"

/** `{apiKey}`: the plaintext only in the creating response, the masked form everywhere else. */
export const ApiKeyResponse = Schema.Struct({ apiKey: Schema.String }).annotate({ identifier: "ApiKeyResponse" })

const KeyName = NonEmpty.check(Schema.isMaxLength(100))

const errors = [BadRequest, Forbidden, NotFound]

/** The spec's company API keys, identified by (companyId, name). */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys").add(
  HttpApiEndpoint.get("get", "/api_keys", {
    query: { companyId: Schema.optional(Schema.String) },
    success: ApiKeyResponse,
    error: errors
  }),
  HttpApiEndpoint.post("create", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse.pipe(HttpApiSchema.status(201)),
    error: errors
  }),
  HttpApiEndpoint.get("getByName", "/api_keys/:companyId/:name", {
    params: { companyId: Schema.String, name: Schema.String },
    success: ApiKeyResponse,
    error: errors
  }),
  HttpApiEndpoint.put("ensure", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  }),
  HttpApiEndpoint.delete("delete", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  })
).middleware(Authentication).prefix("/api/v0") {}

export const PersonalKeySummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  maskedKey: Schema.String,
  expiresAt: Schema.NullOr(IsoDate),
  createdDate: IsoDate
}).annotate({ identifier: "PersonalKeySummary" })

export const CompanyKeySummary = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The user the key acts as; it stops working when that user leaves the company. */
  createdByUserId: Schema.NullOr(Schema.String),
  name: Schema.String,
  maskedKey: Schema.String,
  createdDate: IsoDate
}).annotate({ identifier: "CompanyKeySummary" })

export const KeyList = Schema.Struct({
  personalAccessKeys: Schema.Array(PersonalKeySummary),
  companyKeys: Schema.Array(CompanyKeySummary)
}).annotate({ identifier: "KeyList" })

export const CreatedKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key: Schema.String,
  expiresAt: Schema.NullOr(IsoDate)
}).annotate({ identifier: "CreatedKey" })

/** The Keys area: every key of the calling user, and the user's own personal access keys. */
export class KeysApi extends HttpApiGroup.make("keys").add(
  HttpApiEndpoint.get("list", "/keys", { success: KeyList, error: errors }),
  HttpApiEndpoint.post("create", "/keys", {
    payload: Schema.Struct({ name: KeyName, expiresAt: Schema.optional(FutureDate) }),
    success: CreatedKey.pipe(HttpApiSchema.status(201)),
    error: errors
  }),
  HttpApiEndpoint.delete("revoke", "/keys/:keyId", {
    params: { keyId: Schema.String },
    success: PersonalKeySummary,
    error: errors
  })
).middleware(Authentication).prefix("/api/v0") {}
