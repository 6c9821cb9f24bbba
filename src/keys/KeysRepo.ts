import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../platform/Ids.ts"

export interface CompanyApiKey {
  readonly id: string
  readonly companyId: string
  /** The user the key acts as; null only for a key migrated from a company that had no owner (it fails with 401). */
  readonly createdByUserId: string | null
  readonly name: string
  readonly keyHash: string
  readonly masked: string
  readonly createdAt: Date
}

export interface PersonalAccessKey {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly keyHash: string
  readonly masked: string
  readonly expiresAt: Date | null
  readonly createdAt: Date
}

/** Stored credentials: only a hash and a masked form of each key are kept. */
export interface KeysRepository {
  /** None when the company already has a key of that name. */
  readonly createCompanyKey: (
    input: Pick<CompanyApiKey, "companyId" | "name" | "keyHash" | "masked"> & { readonly createdByUserId: string }
  ) => Effect.Effect<Option.Option<CompanyApiKey>>
  readonly findCompanyKey: (companyId: string, name: string) => Effect.Effect<Option.Option<CompanyApiKey>>
  readonly listCompanyKeys: (companyId: string) => Effect.Effect<ReadonlyArray<CompanyApiKey>>
  /** The deleted key, none when there was none. */
  readonly deleteCompanyKey: (companyId: string, name: string) => Effect.Effect<Option.Option<CompanyApiKey>>
  readonly findCompanyKeyByHash: (keyHash: string) => Effect.Effect<Option.Option<CompanyApiKey>>
  readonly createPersonalKey: (
    input: Pick<PersonalAccessKey, "userId" | "name" | "keyHash" | "masked" | "expiresAt">
  ) => Effect.Effect<PersonalAccessKey>
  readonly findPersonalKeyByHash: (keyHash: string) => Effect.Effect<Option.Option<PersonalAccessKey>>
  readonly listPersonalKeys: (userId: string) => Effect.Effect<ReadonlyArray<PersonalAccessKey>>
  /** The deleted key, none when the user has no key of that id. */
  readonly deletePersonalKey: (userId: string, keyId: string) => Effect.Effect<Option.Option<PersonalAccessKey>>
}

export class KeysRepo extends Context.Service<KeysRepo, KeysRepository>()("keys/KeysRepo") {
  static readonly layer = Layer.effect(KeysRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const company = (rows: ReadonlyArray<CompanyKeyRow>) => Option.map(Option.fromNullishOr(rows[0]), companyKeyFromRow)
    const personal = (rows: ReadonlyArray<PersonalKeyRow>) => Option.map(Option.fromNullishOr(rows[0]), personalKeyFromRow)
    return {
      createCompanyKey: Effect.fn("KeysRepo.createCompanyKey")(function*(input) {
        return company(
          yield* sql<CompanyKeyRow>`
            INSERT INTO company_api_keys (id, company_id, created_by_user_id, name, key_hash, masked)
            VALUES (${newId("key")}, ${input.companyId}, ${input.createdByUserId}, ${input.name}, ${input.keyHash}, ${input.masked})
            ON CONFLICT DO NOTHING RETURNING *`
        )
      }, Effect.orDie),
      findCompanyKey: Effect.fn("KeysRepo.findCompanyKey")(function*(companyId, name) {
        return company(yield* sql<CompanyKeyRow>`
          SELECT * FROM company_api_keys WHERE company_id = ${companyId} AND name = ${name}`)
      }, Effect.orDie),
      listCompanyKeys: Effect.fn("KeysRepo.listCompanyKeys")(function*(companyId) {
        const rows = yield* sql<CompanyKeyRow>`SELECT * FROM company_api_keys WHERE company_id = ${companyId} ORDER BY id`
        return rows.map(companyKeyFromRow)
      }, Effect.orDie),
      deleteCompanyKey: Effect.fn("KeysRepo.deleteCompanyKey")(function*(companyId, name) {
        return company(yield* sql<CompanyKeyRow>`
          DELETE FROM company_api_keys WHERE company_id = ${companyId} AND name = ${name} RETURNING *`)
      }, Effect.orDie),
      findCompanyKeyByHash: Effect.fn("KeysRepo.findCompanyKeyByHash")(function*(keyHash) {
        return company(yield* sql<CompanyKeyRow>`SELECT * FROM company_api_keys WHERE key_hash = ${keyHash}`)
      }, Effect.orDie),
      createPersonalKey: Effect.fn("KeysRepo.createPersonalKey")(function*(input) {
        const rows = yield* sql<PersonalKeyRow>`
          INSERT INTO personal_access_keys (id, user_id, name, key_hash, masked, expires_at)
          VALUES (${newId("pka")}, ${input.userId}, ${input.name}, ${input.keyHash}, ${input.masked}, ${input.expiresAt})
          RETURNING *`
        return personalKeyFromRow(rows[0])
      }, Effect.orDie),
      findPersonalKeyByHash: Effect.fn("KeysRepo.findPersonalKeyByHash")(function*(keyHash) {
        return personal(yield* sql<PersonalKeyRow>`SELECT * FROM personal_access_keys WHERE key_hash = ${keyHash}`)
      }, Effect.orDie),
      listPersonalKeys: Effect.fn("KeysRepo.listPersonalKeys")(function*(userId) {
        const rows = yield* sql<PersonalKeyRow>`SELECT * FROM personal_access_keys WHERE user_id = ${userId} ORDER BY id`
        return rows.map(personalKeyFromRow)
      }, Effect.orDie),
      deletePersonalKey: Effect.fn("KeysRepo.deletePersonalKey")(function*(userId, keyId) {
        return personal(yield* sql<PersonalKeyRow>`
          DELETE FROM personal_access_keys WHERE user_id = ${userId} AND id = ${keyId} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}

interface CompanyKeyRow {
  readonly id: string
  readonly company_id: string
  readonly created_by_user_id: string | null
  readonly name: string
  readonly key_hash: string
  readonly masked: string
  readonly created_at: Date
}

interface PersonalKeyRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly key_hash: string
  readonly masked: string
  readonly expires_at: Date | null
  readonly created_at: Date
}

const companyKeyFromRow = (row: CompanyKeyRow): CompanyApiKey => ({
  id: row.id,
  companyId: row.company_id,
  createdByUserId: row.created_by_user_id,
  name: row.name,
  keyHash: row.key_hash,
  masked: row.masked,
  createdAt: new Date(row.created_at)
})

const personalKeyFromRow = (row: PersonalKeyRow): PersonalAccessKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  keyHash: row.key_hash,
  masked: row.masked,
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
  createdAt: new Date(row.created_at)
})
