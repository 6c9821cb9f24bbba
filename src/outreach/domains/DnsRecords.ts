import { Effect } from "effect"
import type { Resolver } from "node:dns/promises"
import type { DomainStatus, RecordCheck, RecordStatus } from "./DomainsRepo.ts"

/**
 * The DNS records a sending domain publishes, and how a lookup's answer reads
 * as each record's status (docs/domains.md). Three TXT records, the ones
 * mailbox providers require of bulk senders: SPF (the relay may send for the
 * domain), DKIM (the public key of the domain's signing key, under its
 * selector) and DMARC (a policy, which makes the aligned DKIM signature count).
 * No MX and no tracking record: an MX on the domain would take its mail away
 * from the company's own mail server, and tracking links stay on
 * `PUBLIC_BASE_URL`.
 */

export const purposes = ["spf", "dkim", "dmarc"] as const
export type Purpose = (typeof purposes)[number]

export interface RecordToPublish {
  readonly type: "TXT"
  readonly name: string
  readonly value: string
  readonly purpose: Purpose
}

export interface DomainKeys {
  readonly domain: string
  readonly dkimSelector: string
  readonly dkimPublicKey: string
}

/** The SPF term the domain's record must hold: `include:<SPF_INCLUDE>`, else `mx`. */
export const spfTerm = (spfInclude: string | undefined) => spfInclude === undefined ? "mx" : `include:${spfInclude}`

export const recordsToPublish = (keys: DomainKeys, spfInclude: string | undefined): ReadonlyArray<RecordToPublish> => [
  { type: "TXT", name: keys.domain, value: `v=spf1 ${spfTerm(spfInclude)} ~all`, purpose: "spf" },
  {
    type: "TXT",
    name: `${keys.dkimSelector}._domainkey.${keys.domain}`,
    value: `v=DKIM1; k=rsa; p=${keys.dkimPublicKey}`,
    purpose: "dkim"
  },
  { type: "TXT", name: `_dmarc.${keys.domain}`, value: "v=DMARC1; p=none; adkim=r; aspf=r", purpose: "dmarc" }
]

/** `tag=value` pairs of a DKIM or DMARC record (RFC 6376 §3.2), tag names lower-cased. */
const tagsOf = (record: string) =>
  new Map(record.split(";").flatMap((part) => {
    const at = part.indexOf("=")
    return at === -1 ? [] : [[part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim()] as const]
  }))

const startsWithVersion = (version: string) => (record: string) =>
  record.toLowerCase() === version || record.toLowerCase().startsWith(`${version} `) ||
  record.toLowerCase().startsWith(`${version};`)

const check = (status: RecordStatus, found: ReadonlyArray<string>): RecordCheck => ({ status, found })

/** The status of one record from the TXT strings found at its name. */
export const readRecord = (
  expected: RecordToPublish,
  keys: DomainKeys,
  spfInclude: string | undefined,
  txt: ReadonlyArray<string>
): RecordCheck => {
  switch (expected.purpose) {
    case "spf": {
      const spf = txt.filter(startsWithVersion("v=spf1"))
      if (spf.length === 0) return check("missing", txt)
      // RFC 7208 §4.5: more than one SPF record is a permanent error for every receiver.
      if (spf.length > 1) return check("mismatch", spf)
      const wanted = spfTerm(spfInclude).toLowerCase()
      const terms = spf[0]!.toLowerCase().split(/\s+/).map((term) => term.replace(/^\+/, ""))
      return check(terms.includes(wanted) ? "verified" : "mismatch", spf)
    }
    case "dkim": {
      const keysFound = txt.filter((record) => tagsOf(record).has("p"))
      if (keysFound.length === 0) return check("missing", txt)
      const ours = keysFound.some((record) => (tagsOf(record).get("p") ?? "").replace(/\s+/g, "") === keys.dkimPublicKey)
      return check(ours ? "verified" : "mismatch", keysFound)
    }
    case "dmarc": {
      const dmarc = txt.filter(startsWithVersion("v=dmarc1"))
      if (dmarc.length === 0) return check("missing", txt)
      const policy = tagsOf(dmarc[0]!).get("p")?.toLowerCase()
      const valid = dmarc.length === 1 && (policy === "none" || policy === "quarantine" || policy === "reject")
      return check(valid ? "verified" : "mismatch", dmarc)
    }
  }
}

/** Answers that mean "no such record"; any other failure means the lookup could not be made. */
const absent = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN"])

/** The TXT strings at `name` (each record's chunks joined); none when there are none; a failed lookup fails. */
const lookupTxt = (resolver: Resolver, name: string) =>
  Effect.tryPromise({
    try: () => resolver.resolveTxt(name),
    catch: (error) => error as NodeJS.ErrnoException
  }).pipe(
    Effect.map((records) => records.map((chunks) => chunks.join(""))),
    Effect.catchIf((error) => absent.has(error.code ?? ""), () => Effect.succeed<ReadonlyArray<string>>([]))
  )

/**
 * Looks every record up; a lookup that fails (timeout, SERVFAIL) leaves its
 * record `pending` with the failure in `found`, so a flaky resolver never
 * reads as a wrong record.
 */
export const checkRecords = (resolver: Resolver, keys: DomainKeys, spfInclude: string | undefined) =>
  Effect.forEach(recordsToPublish(keys, spfInclude), (expected) =>
    lookupTxt(resolver, expected.name).pipe(
      Effect.map((txt) => [expected.purpose, readRecord(expected, keys, spfInclude, txt)] as const),
      Effect.catch((error) =>
        Effect.succeed([expected.purpose, check("pending", [`lookup failed: ${error.code ?? error.message}`])] as const)
      )
    ), { concurrency: "unbounded" }).pipe(Effect.map((entries) => Object.fromEntries(entries) as Record<Purpose, RecordCheck>))

/** Verified when every record is; failed when one is missing or wrong; else (a lookup failed) still pending. */
export const domainStatus = (checks: Readonly<Record<Purpose, RecordCheck>>): DomainStatus => {
  const statuses = purposes.map((purpose) => checks[purpose].status)
  if (statuses.every((status) => status === "verified")) return "verified"
  if (statuses.some((status) => status === "missing" || status === "mismatch")) return "failed"
  return "pending"
}
