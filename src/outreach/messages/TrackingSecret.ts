import { Context, Effect, Layer, Option, Redacted } from "effect"
import { createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import { InstallationSecrets } from "../../platform/Secrets.ts"
import { OutreachConfig } from "./OutreachConfig.ts"

/**
 * The key that signs tracking and unsubscribe links: `TRACKING_SECRET`, else the installation's generated one.
 * A `KeyObject` made once: an HMAC keyed with raw bytes imports them again each time (~15 µs of a message's 4–5).
 */
export class TrackingSecret extends Context.Service<TrackingSecret, { readonly key: KeyObject }>()(
  "outreach/TrackingSecret"
) {
  static readonly layer = Layer.effect(TrackingSecret, Effect.gen(function*() {
    const config = yield* OutreachConfig
    const secret = Option.isSome(config.trackingSecret)
      ? Redacted.value(config.trackingSecret.value)
      : yield* InstallationSecrets.use((secrets) => secrets.getOrCreate("tracking", randomBytes(32).toString("base64url")))
    return { key: createSecretKey(Buffer.from(secret)) }
  }))
}
