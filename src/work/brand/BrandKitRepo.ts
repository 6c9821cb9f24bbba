import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, readerOf, Timestamp } from "../../storage/Columns.ts"
import { jsonParam } from "../../storage/Rows.ts"
import { BrandColors, BrandFonts, BrandVoice } from "./Api.ts"

/** A company's brand kit, as stored: one row per company, replaced whole by each PUT. */
export const BrandKitRecord = Schema.Struct({
  companyId: Schema.String,
  name: Schema.NullOr(Schema.String),
  logoFileId: Schema.NullOr(Schema.String),
  colors: BrandColors,
  fonts: BrandFonts,
  voice: BrandVoice,
  links: Schema.Record(Schema.String, Schema.String),
  updatedAt: Timestamp
})
export type BrandKitRecord = typeof BrandKitRecord.Type

export interface BrandKitRepository {
  readonly get: (companyId: string) => Effect.Effect<Option.Option<BrandKitRecord>>
  /** Inserts or replaces the company's kit. */
  readonly put: (kit: BrandKitRecord) => Effect.Effect<BrandKitRecord>
}

const BrandKitRow = fromColumns(BrandKitRecord)

export class BrandKitRepo extends Context.Service<BrandKitRepo, BrandKitRepository>()("brand/BrandKitRepo") {
  static readonly layer = Layer.effect(BrandKitRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = readerOf(BrandKitRow)
    return {
      get: Effect.fn("BrandKitRepo.get")(function*(companyId) {
        return yield* rows.first(sql`SELECT * FROM brand_kits WHERE company_id = ${companyId}`)
      }, Effect.orDie),
      put: Effect.fn("BrandKitRepo.put")(function*(kit) {
        return yield* rows.one(sql`
          INSERT INTO brand_kits (company_id, name, logo_file_id, colors, fonts, voice, links, updated_at)
          VALUES (${kit.companyId}, ${kit.name}, ${kit.logoFileId}, ${jsonParam(kit.colors)}::jsonb,
            ${jsonParam(kit.fonts)}::jsonb, ${jsonParam(kit.voice)}::jsonb, ${jsonParam(kit.links)}::jsonb, ${kit.updatedAt})
          ON CONFLICT (company_id) DO UPDATE SET
            name = excluded.name, logo_file_id = excluded.logo_file_id, colors = excluded.colors,
            fonts = excluded.fonts, voice = excluded.voice, links = excluded.links,
            updated_at = greatest(excluded.updated_at, brand_kits.updated_at + interval '1 millisecond')
          RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
