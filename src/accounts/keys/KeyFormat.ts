import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { crc32 } from "node:zlib"

/**
 * Key format, after GitHub's tokens: a recognizable prefix, 43 base62
 * characters of randomness (256 bits) and a 6-character base62 CRC32 of
 * both. Secret scanners can match the prefix; a mistyped key fails the
 * checksum before any lookup. Only the SHA-256 of a key is stored.
 */
export type KeyKind = "company" | "personal"

export const prefixes: Record<KeyKind, string> = { company: "plk_", personal: "pak_" }

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const bodyLength = 43
const checksumLength = 6

const base62 = (value: bigint, width: number) => {
  let out = ""
  for (let i = 0; i < width; i++) {
    out = alphabet[Number(value % 62n)] + out
    value /= 62n
  }
  return out
}

const checksumOf = (prefix: string, body: string) => base62(BigInt(crc32(prefix + body)), checksumLength)

export interface GeneratedKey {
  /** The secret: returned once, by the call that created it. */
  readonly plaintext: string
  readonly hash: string
  readonly masked: string
}

export const hashKey = (plaintext: string): string => createHash("sha256").update(plaintext).digest("hex")

export const maskKey = (plaintext: string): string => {
  const prefix = Object.values(prefixes).find((p) => plaintext.startsWith(p)) ?? ""
  return `${prefix}…${plaintext.slice(-4)}`
}

export const generateKey = (kind: KeyKind): GeneratedKey => {
  const prefix = prefixes[kind]
  const body = base62(BigInt(`0x${randomBytes(32).toString("hex")}`), bodyLength)
  const plaintext = `${prefix}${body}${checksumOf(prefix, body)}`
  return { plaintext, hash: hashKey(plaintext), masked: maskKey(plaintext) }
}

const shape = /^(plk_|pak_)([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/

/** The key's kind when it is well formed and its checksum holds; undefined otherwise. */
export const kindOf = (candidate: string): KeyKind | undefined => {
  const match = shape.exec(candidate)
  if (match === null) return undefined
  const [, prefix, body, checksum] = match
  const expected = checksumOf(prefix, body)
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(checksum))) return undefined
  return prefix === prefixes.company ? "company" : "personal"
}
