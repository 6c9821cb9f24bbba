import { Effect, Option, Result } from "effect"
import { generateKeyPair, randomBytes } from "node:crypto"
import { promisify } from "node:util"
import { changing } from "../../auth/AccessRevision.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { newId } from "../../platform/Ids.ts"
import { dnsResolver, OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Domain, NewDomain } from "./Api.ts"
import { checkRecords, domainStatus, recordsToPublish } from "./DnsRecords.ts"
import { normalizeDomain } from "./DomainName.ts"
import { DomainsConfig } from "./DomainsConfig.ts"
import { type DomainRecord, DomainsRepo } from "./DomainsRepo.ts"
import { DomainExists, DomainNotFound, InvalidDomainName } from "./Errors.ts"

const generateRsaKeyPair = promisify(generateKeyPair)

/** A 2048-bit RSA key pair, made on libuv's thread pool (never on the thread serving requests). */
const dkimKeyPair = Effect.promise(() =>
  generateRsaKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "der" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })
)

const toDomain = (record: DomainRecord, spfInclude: string | undefined): typeof Domain.Type => ({
  id: record.id,
  companyId: record.companyId,
  domain: record.domain,
  status: record.status,
  dkimSelector: record.dkimSelector,
  records: recordsToPublish(record, spfInclude).map((expected) => ({
    ...expected,
    ...(record.checks[expected.purpose] ?? { status: "pending" as const, found: [] })
  })),
  checkedAt: record.checkedAt,
  verifiedAt: record.verifiedAt,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

/** The answer for a record, with the records as the configured SPF include expects them. */
const answer = (record: DomainRecord) =>
  DomainsConfig.useSync((config) => toDomain(record, Option.getOrUndefined(config.spfInclude)))

const find = (companyId: string, id: string) =>
  Effect.flatMap(DomainsRepo.use((repo) => repo.get(companyId, id)), orRefuse(() => new DomainNotFound({ id })))

/** A new domain of the company (checked name), with a fresh DKIM key pair whose private key is sealed. */
export const newDomainRecord = Effect.fn("Domains.newDomainRecord")(function*(companyId: string, domain: string) {
  const { publicKey, privateKey } = yield* dkimKeyPair
  const id = newId("dom")
  const now = yield* currentDate
  return {
    id,
    companyId,
    domain,
    status: "pending",
    dkimSelector: `pa${randomBytes(4).toString("hex")}`,
    dkimPublicKey: publicKey.toString("base64"),
    dkimPrivateKey: yield* SecretBox.use((box) => box.seal(privateKey, id)),
    checks: {},
    checkedAt: null,
    verifiedAt: null,
    createdAt: now,
    updatedAt: now
  } satisfies DomainRecord
})

export const create = Effect.fn("Domains.create")(function*(input: typeof NewDomain.Type) {
  const principal = yield* requireCompany(input.companyId)
  const domain = normalizeDomain(input.domain)
  if (Result.isFailure(domain)) return yield* new InvalidDomainName({ domain: input.domain, reason: domain.failure })
  const record = yield* newDomainRecord(principal.companyId, domain.success)
  const created = yield* DomainsRepo.use((repo) => repo.create(record))
  if (Option.isNone(created)) return yield* new DomainExists({ domain: domain.success })
  return yield* answer(created.value)
})

export const list = Effect.fn("Domains.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* DomainsRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(yield* Effect.forEach(rows, answer), total, request)
})

export const get = Effect.fn("Domains.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return yield* answer(yield* find(principal.companyId, id))
})

export const remove = Effect.fn("Domains.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  // Senders keep their checks at the access revision: the bump stops mail from this domain at once.
  const removed = yield* changing(DomainsRepo.use((repo) => repo.remove(principal.companyId, id)))
  return yield* answer(yield* orRefuse(() => new DomainNotFound({ id }))(removed))
})

export const verify = Effect.fn("Domains.verify")(function*(id: string, body: { readonly companyId?: string | undefined } | null) {
  const principal = yield* requireCompany(body?.companyId)
  const record = yield* find(principal.companyId, id)
  const { dnsServers } = yield* OutboundConfig
  const { spfInclude } = yield* DomainsConfig
  const checks = yield* checkRecords(dnsResolver(dnsServers), record, Option.getOrUndefined(spfInclude))
  const checkedAt = yield* currentDate
  const saved = yield* changing(DomainsRepo.use((repo) =>
    repo.saveCheck(principal.companyId, id, { status: domainStatus(checks), checks, checkedAt })
  ))
  return yield* answer(yield* orRefuse(() => new DomainNotFound({ id }))(saved))
})
