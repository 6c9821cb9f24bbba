import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  storage: Schema.Literals(["postgres", "pglite", "memory"]),
  migrationVersion: Schema.Int
}).annotate({ identifier: "Health" })

/**
 * Liveness and storage state; needs no credentials. Served at `/health` for
 * probes, outside the OpenAPI document, which describes only `/api/v0/…`.
 */
export class HealthApi extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("check", "/health", { success: Health })
).annotate(OpenApi.Exclude, true) {}
