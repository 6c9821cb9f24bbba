import { Result } from "effect"
import { domainToASCII, domainToUnicode } from "node:url"
import validator from "validator"

/**
 * A domain name as DNS stores it: IDNA-mapped to ASCII (UTS #46, RFC 5890:
 * `bücher.example` → `xn--bcher-kva.example`), lower-case, then held to
 * RFC 1035's host rules — letters, digits and inner hyphens, labels of at
 * most 63 octets, 253 in all, and a top-level label that is not numeric
 * (so no IP address). One trailing dot (the root) is accepted and dropped.
 * A label with hyphens in its third and fourth places is reserved (RFC 5891
 * §4.2.3.1): only an A-label (`xn--…`) that decodes is allowed.
 */

/** An `xn--` label is an A-label only if it decodes to Unicode and encodes back to itself. */
const isReservedOrBadALabel = (label: string) => {
  if (label.slice(2, 4) !== "--") return false
  if (!label.startsWith("xn--")) return true
  const unicode = domainToUnicode(label)
  return unicode === label || domainToASCII(unicode) !== label
}

export const normalizeDomain = (input: string): Result.Result<string, string> => {
  const trimmed = input.trim().replace(/\.$/, "")
  if (trimmed.length === 0) return Result.fail("it is empty")
  if (trimmed.includes("@") || trimmed.includes("/") || trimmed.includes(":")) {
    return Result.fail("give the bare domain (example.com), not an address or a URL")
  }
  const ascii = domainToASCII(trimmed)
  if (ascii === "") return Result.fail("it is not a valid internationalised domain name")
  if (ascii.length > 253) return Result.fail("it is longer than 253 characters")
  if (ascii.split(".").some(isReservedOrBadALabel)) {
    return Result.fail("a label with \"--\" in its third and fourth places must be a valid xn-- A-label")
  }
  const host = validator.isFQDN(ascii, {
    require_tld: true,
    allow_underscores: false,
    allow_trailing_dot: false,
    allow_numeric_tld: false,
    allow_wildcard: false
  })
  return host ? Result.succeed(ascii) : Result.fail("each dot-separated label must be 1–63 letters, digits or inner hyphens, with at least two labels and a non-numeric top-level one")
}
