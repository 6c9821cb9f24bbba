import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"

/** A publicly served file; its bytes are the `Blob` of the same id. */
export interface FileRecord {
  /** 128 random bits: the public URL's secret. */
  readonly id: string
  readonly companyId: string
  /** What the file belongs to (a campaign template's id). */
  readonly ownerId: string
  /** Safe for a URL path segment, with the extension of the sniffed type. */
  readonly name: string
  readonly contentType: string
  readonly size: number
  readonly width: number
  readonly height: number
  readonly createdAt: Date
}

export interface FilesRepository {
  readonly create: (file: FileRecord) => Effect.Effect<FileRecord>
  /** By id alone: the public route knows no company. */
  readonly get: (id: string) => Effect.Effect<Option.Option<FileRecord>>
  /** A company's files of one owner, oldest first. */
  readonly listByOwner: (companyId: string, ownerId: string) => Effect.Effect<ReadonlyArray<FileRecord>>
  /** Deletes the owner's files; answers them (so their blobs can go too). */
  readonly removeByOwner: (companyId: string, ownerId: string) => Effect.Effect<ReadonlyArray<FileRecord>>
}

export class FilesRepo extends Context.Service<FilesRepo, FilesRepository>()("files/FilesRepo") {
  static readonly layer = Layer.effect(FilesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: Effect.fn("FilesRepo.create")(function*(file) {
        const rows = yield* sql<FileRow>`
          INSERT INTO files (id, company_id, owner_id, name, content_type, size, width, height, created_at)
          VALUES (${file.id}, ${file.companyId}, ${file.ownerId}, ${file.name}, ${file.contentType}, ${file.size},
            ${file.width}, ${file.height}, ${file.createdAt})
          RETURNING *`
        return fromRow(rows[0])
      }, Effect.orDie),
      get: Effect.fn("FilesRepo.get")(function*(id) {
        const rows = yield* sql<FileRow>`SELECT * FROM files WHERE id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), fromRow)
      }, Effect.orDie),
      listByOwner: Effect.fn("FilesRepo.listByOwner")(function*(companyId, ownerId) {
        const rows = yield* sql<FileRow>`
          SELECT * FROM files WHERE company_id = ${companyId} AND owner_id = ${ownerId} ORDER BY created_at, id`
        return rows.map(fromRow)
      }, Effect.orDie),
      removeByOwner: Effect.fn("FilesRepo.removeByOwner")(function*(companyId, ownerId) {
        const rows = yield* sql<FileRow>`
          DELETE FROM files WHERE company_id = ${companyId} AND owner_id = ${ownerId} RETURNING *`
        return rows.map(fromRow)
      }, Effect.orDie)
    }
  }))
}

interface FileRow {
  readonly id: string
  readonly company_id: string
  readonly owner_id: string
  readonly name: string
  readonly content_type: string
  readonly size: number
  readonly width: number
  readonly height: number
  readonly created_at: Date
}

const fromRow = (row: FileRow): FileRecord => ({
  id: row.id,
  companyId: row.company_id,
  ownerId: row.owner_id,
  name: row.name,
  contentType: row.content_type,
  size: Number(row.size),
  width: Number(row.width),
  height: Number(row.height),
  createdAt: new Date(row.created_at)
})
