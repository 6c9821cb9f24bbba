import { Effect, Option, Redacted, Result } from "effect"
import { createPrivateKey } from "node:crypto"
import { AccessRevision } from "../../auth/AccessRevision.ts"
import { makeRevisionCache } from "../../auth/RevisionCache.ts"
import { addressOf } from "../mail/Message.ts"
import { type DkimSettings, MailConfig } from "../mail/MailConfig.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { normalizeDomain } from "./DomainName.ts"
import { DomainsRepo } from "./DomainsRepo.ts"
import { SenderNotAllowed } from "./Errors.ts"

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
  // A key that no longer opens means the installation lost its SECRETS_KEY: an operator's defect, not the sender's.
  const pem = yield* SecretBox.use((box) => Effect.orDie(box.open(found.value.dkimPrivateKey, found.value.id)))
  return Option.some<DkimSettings>({
    domain: found.value.domain,
    selector: found.value.dkimSelector,
    // Parsed here, once per cached check: parsing a PEM key costs about as much as a signature.
    privateKey: Redacted.make(createPrivateKey(pem))
  })
})

/** Refuses a `fromEmail` the company may not send as; nothing (or null) is always allowed: it means `MAIL_FROM`. */
export const checkSender = (companyId: string, fromEmail: string | null | undefined) =>
  fromEmail === undefined || fromEmail === null ? Effect.void : Effect.asVoid(signingFor(companyId, fromEmail))

/**
 * `signingFor` as a sender uses it for every message: a check that passed is
 * kept per company and address at the access revision it was made at
 * (`RevisionCache`), and deleting or re-verifying a domain bumps the
 * revision, so the next message in any process checks anew. A refusal is
 * never kept.
 */
export const cachedSigning = Effect.gen(function*() {
  const revisions = yield* AccessRevision
  const checks = makeRevisionCache<Option.Option<DkimSettings>>(1_000)
  return (companyId: string, from: string) =>
    Effect.flatMap(revisions.current, (revision) => checks.at(revision, `${companyId}\n${from}`, () => signingFor(companyId, from)))
})
