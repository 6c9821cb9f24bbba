import { Config, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { currentDate } from "./Time.ts"

/**
 * Installation secrets: generated once, kept in the database, the same for
 * every process on it. `getOrCreate` stores `candidate` unless a value is
 * there already, and answers the value in force.
 */
export class InstallationSecrets extends Context.Service<InstallationSecrets, {
  readonly getOrCreate: (name: string, candidate: string) => Effect.Effect<string>
}>()("platform/InstallationSecrets") {
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

/** A sealed value could not be opened: another key sealed it, or it was altered. */
export class SealedValueUnreadable extends Data.TaggedError("SealedValueUnreadable")<{ readonly reason: string }> {
  override get message() {
    return `A sealed value cannot be opened (${this.reason}): was SECRETS_KEY changed?`
  }
}

export interface SealingKey {
  /**
   * `plaintext` encrypted with AES-256-GCM under the key, as text for a
   * column: `v1.<iv>.<tag>.<ciphertext>` (base64url). `context` (e.g. the
   * owning row's id) is authenticated, so a sealed value copied to another
   * row does not open there.
   */
  readonly seal: (plaintext: string, context: string) => string
  /** The plaintext of `seal(plaintext, context)`; throws `SealedValueUnreadable` otherwise. */
  readonly open: (sealed: string, context: string) => string
}

const version = "v1"

/** The 256-bit encryption key derived (HKDF-SHA256) from a secret of any length. */
const encryptionKey = (secret: string) =>
  Buffer.from(hkdfSync("sha256", secret, "platform-api", "secret-box/aes-256-gcm", 32))

export const secretBoxWith = (secret: string): SealingKey => {
  const key = encryptionKey(secret)
  return {
    seal: (plaintext, context) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(context))
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return [version, iv, cipher.getAuthTag(), ciphertext].map((part) =>
        typeof part === "string" ? part : part.toString("base64url")
      ).join(".")
    },
    open: (sealed, context) => {
      const [prefix, iv, tag, ciphertext] = sealed.split(".")
      if (prefix !== version || iv === undefined || tag === undefined || ciphertext === undefined) {
        throw new SealedValueUnreadable({ reason: "not a sealed value" })
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
          .setAAD(Buffer.from(context))
          .setAuthTag(Buffer.from(tag, "base64url"))
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8")
      } catch {
        throw new SealedValueUnreadable({ reason: "sealed under another key, or altered" })
      }
    }
  }
}

/**
 * Encryption at rest of the secrets users give or the service makes (DKIM
 * private keys, mailbox passwords), as `SealingKey` describes. The key:
 * `SECRETS_KEY` when set (any long random string; keep it, or sealed values
 * cannot be read again), else a secret the installation generates once and
 * keeps in its database — read on first use, so the layer can be built
 * before the migrations have run. A value that does not open fails with
 * `SealedValueUnreadable`; each caller says what that stops.
 */
export class SecretBox extends Context.Service<SecretBox, {
  readonly seal: (plaintext: string, context: string) => Effect.Effect<string>
  readonly open: (sealed: string, context: string) => Effect.Effect<string, SealedValueUnreadable>
}>()("platform/SecretBox") {
  static readonly layer = Layer.effect(SecretBox, Effect.gen(function*() {
    const configured = yield* Effect.orDie(Config.option(Config.Redacted("SECRETS_KEY")))
    const secrets = yield* InstallationSecrets
    const key = yield* Effect.cached(Effect.map(
      Option.isSome(configured)
        ? Effect.succeed(Redacted.value(configured.value))
        : secrets.getOrCreate("secret-box", randomBytes(32).toString("base64url")),
      secretBoxWith
    ))
    return {
      seal: (plaintext, context) => Effect.map(key, (box) => box.seal(plaintext, context)),
      open: (sealed, context) =>
        Effect.flatMap(key, (box) =>
          Effect.try({
            try: () => box.open(sealed, context),
            catch: (error) => error instanceof SealedValueUnreadable ? error : new SealedValueUnreadable({ reason: String(error) })
          }))
    }
  })).pipe(Layer.provide(InstallationSecrets.layer))
}
