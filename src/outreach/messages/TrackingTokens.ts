import { createHmac, type KeyObject, timingSafeEqual } from "node:crypto"

/**
 * Signed tracking tokens: `<payload>.<mac>`, both base64url, where the
 * payload names what the link is for (open pixel, click on link N,
 * unsubscribe) and the recipient, and the mac is HMAC-SHA-256 of the payload
 * under the installation's tracking secret. Nobody without the secret can
 * make or change one; a token of one kind never passes as another.
 */
export type TrackingLink =
  | { readonly kind: "open"; readonly recipientId: string }
  | { readonly kind: "click"; readonly recipientId: string; readonly link: number }
  | { readonly kind: "unsubscribe"; readonly recipientId: string }

const kindCodes = { open: "o", click: "c", unsubscribe: "u" } as const

const macOf = (secret: KeyObject, payload: string) => createHmac("sha256", secret).update(payload).digest()

const payloadOf = (link: TrackingLink) =>
  link.kind === "click" ? `c:${link.recipientId}:${link.link}` : `${kindCodes[link.kind]}:${link.recipientId}`

export const signToken = (secret: KeyObject, link: TrackingLink): string => {
  const payload = payloadOf(link)
  return `${Buffer.from(payload).toString("base64url")}.${macOf(secret, payload).toString("base64url")}`
}

const kindOfCode: Record<string, TrackingLink["kind"]> = { o: "open", c: "click", u: "unsubscribe" }

/** The link a token names when its mac is right; undefined for anything forged, tampered or malformed. */
export const verifyToken = (secret: KeyObject, token: string): TrackingLink | undefined => {
  if (token.length > 512) return undefined
  const [encoded, mac, ...rest] = token.split(".")
  if (encoded === undefined || mac === undefined || rest.length > 0) return undefined
  const payload = Buffer.from(encoded, "base64url").toString()
  const expected = macOf(secret, payload)
  const given = Buffer.from(mac, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  // The mac proves we made this payload; it is still parsed strictly.
  const [code, recipientId, link, ...extra] = payload.split(":")
  const kind = code === undefined ? undefined : kindOfCode[code]
  if (kind === undefined || recipientId === undefined || recipientId === "" || extra.length > 0) return undefined
  if (kind !== "click") return link === undefined ? { kind, recipientId } : undefined
  return link !== undefined && /^\d{1,6}$/.test(link) ? { kind, recipientId, link: Number(link) } : undefined
}
