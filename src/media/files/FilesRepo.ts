import { Context, Effect, Layer, type Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { fromColumns, NumberColumn, readerOf, Timestamp } from "../../storage/Columns.ts"

/** A publicly served file; its bytes are the `Blob` of the same id. */
export const FileRecord = Schema.Struct({
  /** 128 random bits: the public URL's secret. */
  id: Schema.String,
  companyId: Schema.String,
  /** What the file belongs to (a campaign template's id). */
  ownerId: Schema.String,
  /** Safe for a URL path segment, with the extension of the sniffed type. */
  name: Schema.String,
  contentType: Schema.String,
  size: NumberColumn,
  width: NumberColumn,
  height: NumberColumn,
  createdAt: Timestamp
})
export type FileRecord = typeof FileRecord.Type

export interface FilesRepository {
  readonly create: (file: FileRecord) => Effect.Effect<FileRecord>
  /** By id alone: the public route knows no company. */
  readonly get: (id: string) => Effect.Effect<Option.Option<FileRecord>>
  /** A company's files of one owner, oldest first. */
  readonly listByOwner: (companyId: string, ownerId: string) => Effect.Effect<ReadonlyArray<FileRecord>>
  /** Deletes the owner's files; answers them (so their blobs can go too). */
  readonly removeByOwner: (companyId: string, ownerId: string) => Effect.Effect<ReadonlyArray<FileRecord>>
}

const FileRow = fromColumns(FileRecord)

export class FilesRepo extends Context.Service<FilesRepo, FilesRepository>()("files/FilesRepo") {
  static readonly layer = Layer.effect(FilesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const records = readerOf(FileRow)
    return {
      create: Effect.fn("FilesRepo.create")(function*(file) {
        return yield* records.one(sql`
          INSERT INTO files (id, company_id, owner_id, name, content_type, size, width, height, created_at)
          VALUES (${file.id}, ${file.companyId}, ${file.ownerId}, ${file.name}, ${file.contentType}, ${file.size},
            ${file.width}, ${file.height}, ${file.createdAt})
          RETURNING *`)
      }, Effect.orDie),
      get: Effect.fn("FilesRepo.get")(function*(id) {
        return yield* records.first(sql`SELECT * FROM files WHERE id = ${id}`)
      }, Effect.orDie),
      listByOwner: Effect.fn("FilesRepo.listByOwner")(function*(companyId, ownerId) {
        return yield* records.all(sql`
          SELECT * FROM files WHERE company_id = ${companyId} AND owner_id = ${ownerId} ORDER BY created_at, id`)
      }, Effect.orDie),
      removeByOwner: Effect.fn("FilesRepo.removeByOwner")(function*(companyId, ownerId) {
        return yield* records.all(sql`
          DELETE FROM files WHERE company_id = ${companyId} AND owner_id = ${ownerId} RETURNING *`)
      }, Effect.orDie)
    }
  }))
}
