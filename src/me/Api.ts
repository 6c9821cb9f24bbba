import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { Me } from "../auth/Principal.ts"

/** `GET /me`: which company, user and role a credential stands for. */
export class MeApi extends HttpApiGroup.make("me")
  .annotateMerge(OpenApi.annotations({
    description: "Who the credential stands for.",
    override: { "x-displayName": "Me" }
  })).add(
  HttpApiEndpoint.get("get", "/me", { success: Me }).annotateMerge(OpenApi.annotations({
    summary: "Who am I",
    description: "The principal the credential stands for: key kind, company, organization, plan, the acting user (a company key's creator), role and allowed features. Who: any valid key (a personal access key with `X-Company-ID`). Errors: 401 when the key is missing, malformed, unknown, revoked or expired; 404 for a company the key cannot reach."
  }))
).middleware(Authentication).prefix("/api/v0") {}
