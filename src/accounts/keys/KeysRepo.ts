import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { newId } from "../../platform/Ids.ts"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"

export const CompanyApiKey = Schema.Struct({
  id: Schema.String,
  companyId: Schema.String,
  /** The user the key acts as; null only for a key migrated from a company that had no owner (it fails with 401). */
  createdByUserId: Schema.NullOr(Schema.String),
  name: Schema.String,
  keyHash: Schema.String,
  masked: Schema.String,
  createdAt: Timestamp
})
export type CompanyApiKey = typeof CompanyApiKey.Type

export const PersonalAccessKey = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  keyHash: Schema.String,
  masked: Schema.String,
  expiresAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
})
export type PersonalAccessKey = typeof PersonalAccessKey.Type

const CompanyKeyRow = fromColumns(CompanyApiKey)
const PersonalKeyRow = fromColumns(PersonalAccessKey)

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
    const companyKeys = readerOf(CompanyKeyRow)
    const personalKeys = readerOf(PersonalKeyRow)
    return {
      createCompanyKey: Effect.fn("KeysRepo.createCompanyKey")(function*(input) {
        return yield* companyKeys.first(sql`
            INSERT INTO company_api_keys (id, company_id, created_by_user_id, name, key_hash, masked)
            VALUES (${newId("key")}, ${input.companyId}, ${input.createdByUserId}, ${input.name}, ${input.keyHash}, ${input.masked})
            ON CONFLICT DO NOTHING RETURNING *`)
      }, Effect.orDie),
      findCompanyKey: Effect.fn("KeysRepo.findCompanyKey")(function*(companyId, name) {
        return yield* companyKeys.first(sql`
          SELECT * FROM company_api_keys WHERE company_id = ${companyId} AND name = ${name}`)
      }, Effect.orDie),
      listCompanyKeys: Effect.fn("KeysRepo.listCompanyKeys")(function*(companyId) {
        return yield* companyKeys.all(sql`SELECT * FROM company_api_keys WHERE company_id = ${companyId} ORDER BY id`)
      }, Effect.orDie),
      deleteCompanyKey: Effect.fn("KeysRepo.deleteCompanyKey")(function*(companyId, name) {
        return yield* companyKeys.first(sql`
          DELETE FROM company_api_keys WHERE company_id = ${companyId} AND name = ${name} RETURNING *`)
      }, Effect.orDie),
      findCompanyKeyByHash: Effect.fn("KeysRepo.findCompanyKeyByHash")(function*(keyHash) {
        return yield* companyKeys.first(sql`SELECT * FROM company_api_keys WHERE key_hash = ${keyHash}`)
      }, Effect.orDie),
      createPersonalKey: Effect.fn("KeysRepo.createPersonalKey")(function*(input) {
        return yield* personalKeys.one(sql`
          INSERT INTO personal_access_keys (id, user_id, name, key_hash, masked, expires_at)
          VALUES (${newId("pka")}, ${input.userId}, ${input.name}, ${input.keyHash}, ${input.masked}, ${input.expiresAt})
          RETURNING *`)
      }, Effect.orDie),
      findPersonalKeyByHash: Effect.fn("KeysRepo.findPersonalKeyByHash")(function*(keyHash) {
        return yield* personalKeys.first(sql`SELECT * FROM personal_access_keys WHERE key_hash = ${keyHash}`)
      }, Effect.orDie),
      listPersonalKeys: Effect.fn("KeysRepo.listPersonalKeys")(function*(userId) {
        return yield* personalKeys.all(sql`SELECT * FROM personal_access_keys WHERE user_id = ${userId} ORDER BY id`)
      }, Effect.orDie),
      deletePersonalKey: Effect.fn("KeysRepo.deletePersonalKey")(function*(userId, keyId) {
        return yield* personalKeys.first(sql`
          DELETE FROM personal_access_keys WHERE user_id = ${userId} AND id = ${keyId} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
