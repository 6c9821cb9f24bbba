import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { FutureDate, IsoDate, NonEmpty } from "../../platform/Schemas.ts"

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
  }).pipe(described({
    summary: "Get the company's default key",
    does: "The company's default (oldest) API key, masked.",
    who: "apiKeys:manage",
    errors: { 403: "for other roles", 404: "when the company has no key or is another company" }
  })),
  HttpApiEndpoint.post("create", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse.pipe(HttpApiSchema.status(201)),
    error: errors
  }).pipe(described({
    summary: "Create a company API key",
    does: "Creates a named company API key; the plaintext `apiKey` is in this answer only.",
    who: "apiKeys:manage",
    errors: { 400: "when the name exists or is invalid", 403: "for other roles", 404: "for another company" }
  })),
  HttpApiEndpoint.get("getByName", "/api_keys/:companyId/:name", {
    params: { companyId: Schema.String, name: Schema.String },
    success: ApiKeyResponse,
    error: errors
  }).pipe(described({
    summary: "Get a company API key by name",
    does: "The named key, masked.",
    who: "apiKeys:manage",
    errors: { 403: "for other roles", 404: "for an unknown name or another company" }
  })),
  HttpApiEndpoint.put("ensure", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  }).pipe(described({
    summary: "Get or create a company API key",
    does: "Answers the named key masked when it exists, else creates it and answers the plaintext once.",
    who: "apiKeys:manage",
    errors: { 403: "for other roles", 404: "for another company" }
  })),
  HttpApiEndpoint.delete("delete", "/api_keys", {
    payload: Schema.Struct({ companyId: Schema.optional(NonEmpty), name: KeyName }),
    success: ApiKeyResponse,
    error: errors
  }).pipe(described({
    summary: "Delete a company API key",
    does: "Deletes the named key permanently: it fails with 401 on its next request, on every process. Answers the deleted key masked.",
    who: "apiKeys:manage",
    errors: { 403: "for other roles", 404: "for an unknown name or another company" }
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
  HttpApiEndpoint.get("list", "/keys", { success: KeyList, error: errors }).pipe(described({
    summary: "List your keys",
    does: "The caller's keys, masked. A personal access key lists the person's personal access keys and the company keys of every company where they may manage keys; a company key lists its company's keys (when its role may manage them).",
    who: "anyKey"
  })),
  HttpApiEndpoint.post("create", "/keys", {
    payload: Schema.Struct({ name: KeyName, expiresAt: Schema.optional(FutureDate) }),
    success: CreatedKey.pipe(HttpApiSchema.status(201)),
    error: errors
  }).pipe(described({
    summary: "Create a personal access key",
    does: "Issues a personal access key for the calling person, optionally expiring; the plaintext `key` is in this answer only.",
    who: "personalKey"
  })),
  HttpApiEndpoint.delete("revoke", "/keys/:keyId", {
    params: { keyId: Schema.String },
    success: PersonalKeySummary,
    error: errors
  }).pipe(described({
    summary: "Revoke a personal access key",
    does: "Revokes one of the caller's own personal access keys; it fails with 401 on its next request.",
    who: "personalKey",
    errors: { 404: "for a key that is not the caller's" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
