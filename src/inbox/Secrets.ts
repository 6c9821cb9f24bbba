import { Context, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { InstallationSecrets } from "../outreach/TrackingSecret.ts"
import { InboxConfig } from "./InboxConfig.ts"

/**
 * Sealing secrets at rest (mailbox passwords): AES-256-GCM with a fresh
 * 96-bit nonce per value, stored as `v1.<nonce>.<tag>.<ciphertext>` (base64url).
 * The key is derived (HKDF-SHA256) from `SECRETS_KEY`, else from a secret the
 * installation generates once and keeps in the database, so every process on
 * one database opens what another sealed. A tampered value fails to open.
 */
export class Secrets extends Context.Service<Secrets, {
  readonly seal: (plaintext: string) => string
  /** The plaintext; none when the value was tampered with or sealed under another key. */
  readonly open: (sealed: string) => Option.Option<string>
}>()("inbox/Secrets") {
  static readonly layer = Layer.effect(Secrets, Effect.gen(function*() {
    const config = yield* InboxConfig
    const secret = Option.isSome(config.secretsKey)
      ? Redacted.value(config.secretsKey.value)
      : yield* InstallationSecrets.use((secrets) => secrets.getOrCreate("secrets", randomBytes(32).toString("base64url")))
    return sealer(secret)
  }))
}

/** A sealer under the key derived from `secret`. */
export const sealer = (secret: string): Secrets["Service"] => {
  const key = Buffer.from(hkdfSync("sha256", secret, "platform-api", "secrets at rest v1", 32))
  return {
    seal: (plaintext) => {
      const nonce = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, nonce)
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return ["v1", nonce, cipher.getAuthTag(), ciphertext].map((part) => typeof part === "string" ? part : part.toString("base64url")).join(".")
    },
    open: (sealed) => {
      const [version, nonce, tag, ciphertext, ...rest] = sealed.split(".")
      if (version !== "v1" || nonce === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) return Option.none()
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64url"))
        decipher.setAuthTag(Buffer.from(tag, "base64url"))
        return Option.some(Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8"))
      } catch {
        return Option.none()
      }
    }
  }
}
