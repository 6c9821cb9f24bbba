import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { described } from "../../http/Describe.ts"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  storage: Schema.Literals(["postgres", "pglite"]),
  migrationVersion: Schema.Int
}).annotate({ identifier: "Health" })

/**
 * Liveness and storage state; needs no credentials. Served at `/health` for
 * probes, outside the OpenAPI document, which describes only `/api/v0/…`.
 */
export class HealthApi extends HttpApiGroup.make("health")
  .annotateMerge(OpenApi.annotations({
    description: "Liveness and readiness of the service and its storage, without authentication.",
    override: { "x-displayName": "Health" }
  })).add(
  HttpApiEndpoint.get("check", "/health", { success: Health }).pipe(described({
    summary: "Check that the service is up",
    does: "Answers 200 with the storage backend and the applied migration version once storage is ready. Not rate limited. Meant for load balancers and process managers.",
    who: "public"
  }))
).annotate(OpenApi.Exclude, true) {}
