import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../platform/Errors.ts"
import { FutureDate, IsoDate, NonEmpty } from "../platform/Schemas.ts"

/** `{apiKey}`: the plaintext only in the creating response, the masked form everywhere else. */
export const ApiKeyResponse = Schema.Struct({ apiKey: Schema.String }).annotate({ identifier: "ApiKeyResponse" })

const KeyName = NonEmpty.check(Schema.isMaxLength(100))

const errors = [BadRequest, Forbidden, NotFound]

/** The spec's company API keys, identified by (companyId, name). */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .annotateMerge(OpenApi.annotations({
    description: "The spec's company API keys, by name. Managing them needs the company role owner or admin (a company key acts as the user who created it). A key is recorded with its creator and fails with 401 once that user leaves the company. Plaintext keys are shown once, by the call that creates them.",
    override: { "x-displayName": "Company API keys" }
  })).add(
  HttpApiEndpoint.get("get", "/api_keys", {
    query: { companyId: Schema.optional(Schema.String) },
    success: ApiKeyResponse,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Get the company's default key",
    description: "The company's default (oldest) API key, masked. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 404 when the company has no key or is another company; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles."
  })),
  HttpApiEndpoint.post("create", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse.pipe(HttpApiSchema.status(201)),
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Create a company API key",
    description: "Creates a named company API key; the plaintext `apiKey` is in this answer only. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 400 when the name exists or is invalid; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles; 404 for another company."
  })),
  HttpApiEndpoint.get("getByName", "/api_keys/:companyId/:name", {
    params: { companyId: Schema.String, name: Schema.String },
    success: ApiKeyResponse,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Get a company API key by name",
    description: "The named key, masked. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 404 for an unknown name or another company; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles."
  })),
  HttpApiEndpoint.put("ensure", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Get or create a company API key",
    description: "Answers the named key masked when it exists, else creates it and answers the plaintext once. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles; 404 for another company."
  })),
  HttpApiEndpoint.delete("delete", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Delete a company API key",
    description: "Deletes the named key permanently: it fails with 401 on its next request, on every process. Answers the deleted key masked. Who: a company API key (acting as the user who created it) or a personal access key with `X-Company-ID`, whose company role is owner or admin. Errors: 404 for an unknown name or another company; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for other roles."
  }))
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
export class KeysApi extends HttpApiGroup.make("keys")
  .annotateMerge(OpenApi.annotations({
    description: "The calling person's own keys: their personal access keys and the company keys they may manage.",
    override: { "x-displayName": "Your keys" }
  })).add(
  HttpApiEndpoint.get("list", "/keys", { success: KeyList, error: errors }).annotateMerge(OpenApi.annotations({
    summary: "List your keys",
    description: "The caller's keys, masked. A personal access key lists the person's personal access keys and the company keys of every company where they may manage keys; a company key lists its company's keys (when its role may manage them). Who: any valid key. Errors: 401 when the key is missing, malformed, unknown, revoked or expired."
  })),
  HttpApiEndpoint.post("create", "/keys", {
    payload: Schema.Struct({ name: KeyName, expiresAt: Schema.optional(FutureDate) }),
    success: CreatedKey.pipe(HttpApiSchema.status(201)),
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Create a personal access key",
    description: "Issues a personal access key for the calling person, optionally expiring; the plaintext `key` is in this answer only. Who: a personal access key (a company key cannot). Errors: 400 naming the invalid field; 401 when the key is missing, malformed, unknown, revoked or expired; 403 for a company key."
  })),
  HttpApiEndpoint.delete("revoke", "/keys/:keyId", {
    params: { keyId: Schema.String },
    success: PersonalKeySummary,
    error: errors
  }).annotateMerge(OpenApi.annotations({
    summary: "Revoke a personal access key",
    description: "Revokes one of the caller's own personal access keys; it fails with 401 on its next request. Who: a personal access key (a company key cannot: 403). Errors: 404 for a key that is not the caller's; 401 when the key is missing, malformed, unknown, revoked or expired."
  }))
).middleware(Authentication).prefix("/api/v0") {}
