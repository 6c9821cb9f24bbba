import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { selectRecords, type Window } from "../../storage/Windows.ts"

export const DomainStatus = Schema.Literals(["pending", "verified", "failed"])
export type DomainStatus = typeof DomainStatus.Type

export const RecordStatus = Schema.Literals(["pending", "verified", "missing", "mismatch"])
export type RecordStatus = typeof RecordStatus.Type

/** What the last DNS check found for one record to publish. */
export const RecordCheck = Schema.Struct({ status: RecordStatus, found: Schema.Array(Schema.String) })
export type RecordCheck = typeof RecordCheck.Type

export const DomainRecord = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** Lower-case ASCII (an internationalised name in its xn-- form). */
  domain: Schema.String,
  status: DomainStatus,
  dkimSelector: Schema.String,
  /** The DKIM public key: base64 of its DER SubjectPublicKeyInfo, as the DNS record's `p=` carries it. */
  dkimPublicKey: Schema.String,
  /** The PKCS#8 PEM private key, sealed by the `SecretBox`; never leaves the service. */
  dkimPrivateKey: Schema.String,
  /** By record purpose (`spf`, `dkim`, `dmarc`); a purpose never checked is absent. */
  checks: Schema.Record(Schema.String, RecordCheck),
  checkedAt: Schema.NullOr(Timestamp),
  verifiedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type DomainRecord = typeof DomainRecord.Type

export interface DomainCheck {
  readonly status: DomainStatus
  readonly checks: Readonly<Record<string, RecordCheck>>
  readonly checkedAt: Date
}

export interface DomainsRepository {
  /** None when the company has this domain already. */
  readonly create: (domain: DomainRecord) => Effect.Effect<Option.Option<DomainRecord>>
  /** Newest first. */
  readonly list: (
    companyId: string,
    window: Window
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<DomainRecord>; readonly total: number }>
  readonly get: (companyId: string, id: string) => Effect.Effect<Option.Option<DomainRecord>>
  readonly remove: (companyId: string, id: string) => Effect.Effect<Option.Option<DomainRecord>>
  /** Records a DNS check; `verified_at` keeps the first time the domain was verified. */
  readonly saveCheck: (companyId: string, id: string, check: DomainCheck) => Effect.Effect<Option.Option<DomainRecord>>
  /** The company's domain of this name, if it is verified. */
  readonly verified: (companyId: string, domain: string) => Effect.Effect<Option.Option<DomainRecord>>
  /** The companies that verified `domain` (two companies may each prove one name with its own selector). */
  readonly verifiedBy: (domain: string) => Effect.Effect<ReadonlyArray<string>>
}

const DomainRow = fromColumns(DomainRecord)

export class DomainsRepo extends Context.Service<DomainsRepo, DomainsRepository>()("domains/DomainsRepo") {
  static readonly layer = Layer.effect(DomainsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(DomainRow)
    return {
      create: Effect.fn("DomainsRepo.create")(function*(domain) {
        return yield* records.first(sql`
          INSERT INTO sending_domains (id, company_id, domain, status, dkim_selector, dkim_public_key, dkim_private_key,
            checks, checked_at, verified_at, created_at, updated_at)
          VALUES (${domain.id}, ${domain.companyId}, ${domain.domain}, ${domain.status}, ${domain.dkimSelector},
            ${domain.dkimPublicKey}, ${domain.dkimPrivateKey}, ${jsonParam(domain.checks)}::jsonb, ${domain.checkedAt},
            ${domain.verifiedAt}, ${domain.createdAt}, ${domain.updatedAt})
          ON CONFLICT (company_id, domain) DO NOTHING
          RETURNING *`)
      }, Effect.orDie),
      list: Effect.fn("DomainsRepo.list")(function*(companyId, window) {
        return yield* selectRecords(DomainRow, sql, "sending_domains", sql`company_id = ${companyId}`, window)
      }, Effect.orDie),
      get: Effect.fn("DomainsRepo.get")(function*(companyId, id) {
        return yield* records.first(sql`SELECT * FROM sending_domains WHERE company_id = ${companyId} AND id = ${id}`)
      }, Effect.orDie),
      remove: Effect.fn("DomainsRepo.remove")(function*(companyId, id) {
        return yield* records.first(sql`DELETE FROM sending_domains WHERE company_id = ${companyId} AND id = ${id} RETURNING *`)
      }, Effect.orDie),
      saveCheck: Effect.fn("DomainsRepo.saveCheck")(function*(companyId, id, check) {
        const verified = check.status === "verified"
        return yield* records.first(sql`
          UPDATE sending_domains SET
            status = ${check.status},
            checks = ${jsonParam(check.checks)}::jsonb,
            checked_at = ${check.checkedAt},
            verified_at = CASE WHEN ${verified} THEN coalesce(verified_at, ${check.checkedAt}) ELSE NULL END,
            updated_at = ${check.checkedAt}
          WHERE company_id = ${companyId} AND id = ${id}
          RETURNING *`)
      }, Effect.orDie),
      verified: Effect.fn("DomainsRepo.verified")(function*(companyId, domain) {
        return yield* records.first(sql`
          SELECT * FROM sending_domains WHERE company_id = ${companyId} AND domain = ${domain} AND status = 'verified'`)
      }, Effect.orDie),
      verifiedBy: Effect.fn("DomainsRepo.verifiedBy")(function*(domain) {
        const rows = yield* sql<{ readonly company_id: string }>`
          SELECT company_id FROM sending_domains WHERE domain = ${domain} AND status = 'verified'`
        return rows.map((row) => row.company_id)
      }, Effect.orDie)
    }
  }))
}
