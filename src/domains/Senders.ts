import { Effect, Option, Redacted, Result } from "effect"
import { createPrivateKey, type KeyObject } from "node:crypto"
import { addressOf } from "../mail/Message.ts"
import { type DkimSettings, MailConfig } from "../mail/MailConfig.ts"
import { SecretBox } from "../platform/Secrets.ts"
import { normalizeDomain } from "./DomainName.ts"
import { DomainsRepo } from "./DomainsRepo.ts"
import { SenderNotAllowed } from "./Errors.ts"

/**
 * Signing keys by their sealed text, parsed once: a sealed value names one
 * key for good (a new key is a new sealed value), so nothing here goes stale,
 * and parsing a PEM key per message would cost as much as signing it.
 */
const parsedKeys = new Map<string, KeyObject>()
const keyCapacity = 1_000

const parsedKey = (sealed: string, id: string) =>
  Effect.gen(function*() {
    const cached = parsedKeys.get(sealed)
    if (cached !== undefined) return cached
    const key = createPrivateKey(yield* SecretBox.use((box) => box.open(sealed, id)))
    if (parsedKeys.size >= keyCapacity) parsedKeys.delete(parsedKeys.keys().next().value!)
    parsedKeys.set(sealed, key)
    return key
  })

/**
 * Who a company may send as (DESIGN §7.5): an address on one of its verified
 * sending domains, signed with that domain's DKIM key, or the service's own
 * `MAIL_FROM` (signed as `DKIM_*` configures, if at all). Checked when a
 * campaign's or sequence's `fromEmail` is set and again for every message,
 * so a domain deleted meanwhile stops the sending with this reason.
 */
export const signingFor = Effect.fn("Senders.signingFor")(function*(companyId: string, from: string) {
  const mail = yield* MailConfig
  const address = addressOf(from).trim().toLowerCase()
  if (address === addressOf(mail.from).trim().toLowerCase()) return Option.none<DkimSettings>()
  const refused = new SenderNotAllowed({ address, mailFrom: addressOf(mail.from) })
  const domain = normalizeDomain(address.slice(address.lastIndexOf("@") + 1))
  if (Result.isFailure(domain)) return yield* refused
  const found = yield* DomainsRepo.use((repo) => repo.verified(companyId, domain.success))
  if (Option.isNone(found)) return yield* refused
  const privateKey = yield* parsedKey(found.value.dkimPrivateKey, found.value.id)
  return Option.some<DkimSettings>({
    domain: found.value.domain,
    selector: found.value.dkimSelector,
    privateKey: Redacted.make(privateKey)
  })
})

/** Refuses a `fromEmail` the company may not send as; nothing (or null) is always allowed: it means `MAIL_FROM`. */
export const checkSender = (companyId: string, fromEmail: string | null | undefined) =>
  fromEmail === undefined || fromEmail === null ? Effect.void : Effect.asVoid(signingFor(companyId, fromEmail))
