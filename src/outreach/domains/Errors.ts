import { refusal } from "../../platform/Refusal.ts"

/** No sending domain with this id in the caller's company. */
export class DomainNotFound extends refusal("NotFound", "DomainNotFound", ({ id }: { readonly id: string }) => `Domain ${id} not found`) {}

/** Not a host name a mailbox provider could look up (RFC 1035, RFC 5890). */
export class InvalidDomainName extends refusal(
  "Invalid",
  "InvalidDomainName",
  ({ domain, reason }: { readonly domain: string; readonly reason: string }) => `Invalid domain name "${domain}": ${reason}`
) {}

/** The company has this domain already. */
export class DomainExists extends refusal(
  "Invalid",
  "DomainExists",
  ({ domain }: { readonly domain: string }) => `Domain ${domain} has been added already`
) {}

/** A sender address the company may not send from. */
export class SenderNotAllowed extends refusal(
  "Invalid",
  "SenderNotAllowed",
  ({ address, mailFrom }: { readonly address: string; readonly mailFrom: string }) =>
    `fromEmail ${address} is neither on a verified sending domain of the company nor the service's MAIL_FROM (${mailFrom}): add its domain and verify it (POST /api/v0/domains)`
) {}
