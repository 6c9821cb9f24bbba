import { Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { currentDate } from "../platform/Time.ts"
import { OutreachConfig } from "./OutreachConfig.ts"

/**
 * Installation secrets: generated once, kept in the database, the same for
 * every process on it. `getOrCreate` stores `candidate` unless a value is
 * there already, and answers the value in force.
 */
export class InstallationSecrets extends Context.Service<InstallationSecrets, {
  readonly getOrCreate: (name: string, candidate: string) => Effect.Effect<string>
}>()("outreach/InstallationSecrets") {
  static readonly layer = Layer.effect(InstallationSecrets, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      getOrCreate: Effect.fn("InstallationSecrets.getOrCreate")(function*(name, candidate) {
        const now = yield* currentDate
        yield* sql`INSERT INTO installation_secrets (name, value, created_at) VALUES (${name}, ${candidate}, ${now})
          ON CONFLICT (name) DO NOTHING`
        const rows = yield* sql<{ readonly value: string }>`SELECT value FROM installation_secrets WHERE name = ${name}`
        return rows[0].value
      }, Effect.orDie)
    }
  }))

}

/** The key that signs tracking and unsubscribe links: `TRACKING_SECRET`, else the installation's generated one. */
export class TrackingSecret extends Context.Service<TrackingSecret, { readonly key: Uint8Array }>()(
  "outreach/TrackingSecret"
) {
  static readonly layer = Layer.effect(TrackingSecret, Effect.gen(function*() {
    const config = yield* OutreachConfig
    const secret = Option.isSome(config.trackingSecret)
      ? Redacted.value(config.trackingSecret.value)
      : yield* InstallationSecrets.use((secrets) => secrets.getOrCreate("tracking", randomBytes(32).toString("base64url")))
    return { key: Buffer.from(secret) }
  }))
}
