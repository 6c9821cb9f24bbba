import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Authentication } from "../auth/Authentication.ts"
import { Me } from "../auth/Principal.ts"

/** `GET /me`: which company, user and role a credential stands for. */
export class MeApi extends HttpApiGroup.make("me").add(
  HttpApiEndpoint.get("get", "/me", { success: Me })
).middleware(Authentication).prefix("/api/v0") {}
