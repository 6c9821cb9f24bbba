import { createHmac, type KeyObject, timingSafeEqual } from "node:crypto"

/**
 * Reply addresses the platform issues (`INBOUND_REPLY_DOMAIN`): each
 * outreach message gets `r+<id>.<mac>@<domain>` as its `Reply-To`, where `id`
 * is the campaign recipient's or sequence execution's id (or, for an answer
 * sent from the inbox, the thread's) and `mac` is
 * HMAC-SHA-256 of the company and that id under the tracking key, cut to 80
 * bits. Nobody without the key can make one, and one company's address
 * changed to name another company's message no longer verifies. Only lower-
 * case letters and digits: some mail systems change the case of local parts.
 */

const macLength = 20

const macOf = (key: KeyObject, companyId: string, id: string) =>
  createHmac("sha256", key).update(`reply:${companyId}:${id}`).digest("hex").slice(0, macLength)

export const replyAddressOf = (key: KeyObject, domain: string, companyId: string, id: string) =>
  `r+${id}.${macOf(key, companyId, id)}@${domain}`

/** What a reply address names; check it with `isIssued` against the company that owns `id`. */
export interface ReplyToken {
  readonly id: string
  readonly mac: string
}

const shape = new RegExp(`^r\\+([a-z]{2,10}_[0-9a-f]{32,48})\\.([0-9a-f]{${macLength}})$`)

/** The token of a local part (`r+…`) in any case; undefined when it does not have the shape of one. */
export const replyTokenOf = (localPart: string): ReplyToken | undefined => {
  const match = shape.exec(localPart.toLowerCase())
  return match === null ? undefined : { id: match[1]!, mac: match[2]! }
}

/** Whether the platform issued `token` for the message `token.id` of `companyId`. */
export const isIssued = (key: KeyObject, companyId: string, token: ReplyToken) =>
  timingSafeEqual(Buffer.from(macOf(key, companyId, token.id)), Buffer.from(token.mac))
