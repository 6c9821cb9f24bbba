import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { currentDate } from "../../platform/Time.ts"
import { FilesConfig } from "./FilesConfig.ts"

/**
 * Uploaded bytes by id, with their content type and size. In the database by
 * default (`blobs`, bytea: works on PGlite and is shared by every process on
 * one PostgreSQL), or in a folder when `BLOB_DIR` is set. Both sit behind
 * `Blob`, and one contract test runs over every implementation.
 */
export interface StoredBlob {
  readonly id: string
  readonly contentType: string
  readonly size: number
  readonly bytes: Uint8Array
}

export interface BlobStore {
  /** Stores (or replaces) the bytes under `id`. */
  readonly put: (blob: { readonly id: string; readonly contentType: string; readonly bytes: Uint8Array }) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<StoredBlob>>
  /** True when there was something to delete. */
  readonly delete: (id: string) => Effect.Effect<boolean>
}

/** The database's blobs: a repository of the storage backends (`src/app/Storage.ts`). */
export class BlobsRepo extends Context.Service<BlobsRepo, BlobStore>()("files/BlobsRepo") {
  static readonly layer = Layer.effect(BlobsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      // Bytes travel as base64 text and are decoded by the database, the same on both drivers.
      put: Effect.fn("BlobsRepo.put")(function*(blob) {
        const now = yield* currentDate
        yield* sql`
          INSERT INTO blobs (id, content_type, size, data, created_at)
          VALUES (${blob.id}, ${blob.contentType}, ${blob.bytes.length},
            decode(${Buffer.from(blob.bytes).toString("base64")}, 'base64'), ${now})
          ON CONFLICT (id) DO UPDATE SET content_type = excluded.content_type, size = excluded.size, data = excluded.data`
      }, Effect.orDie),
      get: Effect.fn("BlobsRepo.get")(function*(id) {
        const rows = yield* sql<{ readonly content_type: string; readonly size: number; readonly data: string }>`
          SELECT content_type, size, encode(data, 'base64') AS data FROM blobs WHERE id = ${id}`
        return Option.map(Option.fromNullishOr(rows[0]), (row) => ({
          id,
          contentType: row.content_type,
          size: Number(row.size),
          bytes: new Uint8Array(Buffer.from(row.data, "base64"))
        }))
      }, Effect.orDie),
      delete: Effect.fn("BlobsRepo.delete")(function*(id) {
        return (yield* sql`DELETE FROM blobs WHERE id = ${id} RETURNING id`).length > 0
      }, Effect.orDie)
    }
  }))
}

/** Ids name files in the folder: only characters that are safe in a file name. */
const safeId = /^[A-Za-z0-9_-]{1,128}$/

/** Blobs as files in `directory`: the bytes in `<id>`, the content type beside them in `<id>.type`. */
export const folderStore = (directory: string): BlobStore => {
  const folder = resolve(directory)
  const pathOf = (id: string) => (safeId.test(id) ? Option.some(join(folder, id)) : Option.none())
  const writeWhole = async (path: string, data: Uint8Array | string) => {
    await writeFile(`${path}.tmp`, data)
    await rename(`${path}.tmp`, path)
  }
  /** A missing file is an answer (none); any other file-system failure is a defect. */
  const unlessMissing = <A>(io: () => Promise<A>): Effect.Effect<Option.Option<A>> =>
    Effect.tryPromise(io).pipe(
      Effect.map(Option.some),
      Effect.catch((error) =>
        (error.cause as { readonly code?: string }).code === "ENOENT" ? Effect.succeed(Option.none()) : Effect.die(error)
      )
    )
  return {
    put: (blob) =>
      Option.match(pathOf(blob.id), {
        onNone: () => Effect.die(new Error(`Unsafe blob id ${JSON.stringify(blob.id)}`)),
        onSome: (path) =>
          Effect.promise(async () => {
            await mkdir(folder, { recursive: true })
            await writeWhole(path, blob.bytes)
            await writeWhole(`${path}.type`, blob.contentType)
          })
      }),
    get: (id) =>
      Option.match(pathOf(id), {
        onNone: () => Effect.succeed(Option.none()),
        onSome: (path) =>
          Effect.map(
            unlessMissing(() => Promise.all([readFile(`${path}.type`, "utf8"), readFile(path)])),
            Option.map(([contentType, bytes]) => ({ id, contentType, size: bytes.length, bytes: new Uint8Array(bytes) }))
          )
      }),
    delete: (id) =>
      Option.match(pathOf(id), {
        onNone: () => Effect.succeed(false),
        onSome: (path) =>
          Effect.gen(function*() {
            const removed = yield* unlessMissing(() => rm(`${path}.type`))
            yield* Effect.promise(() => rm(path, { force: true }))
            return Option.isSome(removed)
          })
      })
  }
}

export class Blob extends Context.Service<Blob, BlobStore>()("files/Blob") {
  /** The storage backend's blobs (database, or memory in tests). */
  static readonly database = Layer.effect(Blob, Effect.gen(function*() {
    return yield* BlobsRepo
  }))

  static readonly folder = (directory: string) => Layer.succeed(Blob, folderStore(directory))

  /** A folder when `BLOB_DIR` is set, else the database. */
  static readonly layer: Layer.Layer<Blob, never, FilesConfig | BlobsRepo> = Layer.unwrap(FilesConfig.useSync((config) =>
    Option.match(config.blobDir, { onNone: () => Blob.database, onSome: Blob.folder })
  ))
}
