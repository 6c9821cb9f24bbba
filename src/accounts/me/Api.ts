import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { described } from "../../http/Describe.ts"
import { Authentication } from "../../auth/Authentication.ts"
import { Me } from "../../auth/Principal.ts"

/** `GET /me`: which company, user and role a credential stands for. */
export class MeApi extends HttpApiGroup.make("me")
  .annotateMerge(OpenApi.annotations({
    description: "Who the credential stands for.",
    override: { "x-displayName": "Me" }
  })).add(
  HttpApiEndpoint.get("get", "/me", { success: Me }).pipe(described({
    summary: "Who am I",
    does: "The principal the credential stands for: key kind, company, organization, plan, the acting user (a company key's creator), role and allowed features.",
    who: "anyKey",
    errors: { 404: "for a company the key cannot reach" }
  }))
).middleware(Authentication).prefix("/api/v0") {}
