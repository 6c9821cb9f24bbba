import { Effect, Option } from "effect"
import { FileNotFound, InvalidImage } from "./Errors.ts"
import { HttpServerResponse, type Multipart } from "effect/http"
import { fileTypeFromBuffer } from "file-type"
import { imageSize } from "image-size"
import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import { AppConfig } from "../../platform/AppConfig.ts"
import { currentDate } from "../../platform/Time.ts"
import { Blob } from "./Blob.ts"
import { type FileRecord, FilesRepo } from "./FilesRepo.ts"

/**
 * Images uploaded by companies and served publicly (e-mail clients load them
 * without credentials). The type is sniffed from the bytes with `file-type`,
 * never taken from the name or the declared type; the dimensions are read with
 * `image-size`. Decisions in docs/files.md.
 */

/** The image types an upload may be, with the extension their files get. */
const imageExtensions: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp"
}

/** `My photo (1).PNG` → `My-photo-1.png`: safe in a URL path, with the extension of what the bytes are. */
export const safeFileName = (original: string, extension: string): string => {
  const stem = original.replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+|[.-]+$/g, "")
  return `${stem.slice(0, 80) || "image"}.${extension}`
}

/** Checks and stores an uploaded image for `ownerId`; anything but a PNG, JPEG, GIF or WebP image is a 400. */
export const storeImage = Effect.fn("Files.storeImage")(function*(
  companyId: string,
  ownerId: string,
  upload: Multipart.PersistedFile
) {
  const bytes = new Uint8Array(yield* Effect.promise(() => readFile(upload.path)))
  return yield* storeImageBytes(companyId, ownerId, upload.name, bytes)
})

/**
 * Checks and stores image bytes for `ownerId` under a safe form of `name`
 * (its extension from the sniffed type); anything but a PNG, JPEG, GIF or
 * WebP image is refused.
 */
export const storeImageBytes = Effect.fn("Files.storeImageBytes")(function*(
  companyId: string,
  ownerId: string,
  name: string,
  bytes: Uint8Array
) {
  if (bytes.length === 0) return yield* new InvalidImage({ message: "The file is empty" })
  const sniffed = yield* Effect.promise(() => fileTypeFromBuffer(bytes))
  const extension = sniffed === undefined ? undefined : imageExtensions[sniffed.mime]
  if (sniffed === undefined || extension === undefined) {
    return yield* new InvalidImage({
      message: `The file is not a PNG, JPEG, GIF or WebP image (its content is ${sniffed?.mime ?? "not a known file type"})`
    })
  }
  const dimensions = yield* Effect.try({
    try: () => imageSize(bytes),
    catch: () => new InvalidImage({ message: `The ${extension.toUpperCase()} image is damaged: its dimensions cannot be read` })
  })
  return yield* storeFile({
    companyId,
    ownerId,
    name: safeFileName(name, extension),
    contentType: sniffed.mime,
    bytes,
    width: dimensions.width,
    height: dimensions.height
  })
})

/** Stores bytes the platform made (a render) as a public file of `ownerId`, under a new unguessable id. */
export const storeFile = Effect.fn("Files.storeFile")(function*(file: {
  readonly companyId: string
  readonly ownerId: string
  readonly name: string
  readonly contentType: string
  readonly bytes: Uint8Array
  readonly width: number
  readonly height: number
}) {
  const id = `fil_${randomBytes(16).toString("hex")}`
  yield* Blob.use((blob) => blob.put({ id, contentType: file.contentType, bytes: file.bytes }))
  const now = yield* currentDate
  return yield* FilesRepo.use((repo) =>
    repo.create({
      id,
      companyId: file.companyId,
      ownerId: file.ownerId,
      name: file.name,
      contentType: file.contentType,
      size: file.bytes.length,
      width: file.width,
      height: file.height,
      createdAt: now
    })
  )
})

/** Where the outside fetches a file: `PUBLIC_BASE_URL/api/v0/public/files/{id}/{name}`. */
export const publicUrl = (file: Pick<FileRecord, "id" | "name">) =>
  AppConfig.useSync((config) => `${config.publicBaseUrl}/api/v0/public/files/${file.id}/${encodeURIComponent(file.name)}`)

/** Deletes an owner's files and their bytes. */
export const removeOwned = Effect.fn("Files.removeOwned")(function*(companyId: string, ownerId: string) {
  const removed = yield* FilesRepo.use((repo) => repo.removeByOwner(companyId, ownerId))
  yield* Effect.forEach(removed, (file) => Blob.use((blob) => blob.delete(file.id)), { discard: true })
})

/** A public file's type and bytes; none unless id and name both match. */
export const readPublic = Effect.fn("Files.readPublic")(function*(fileId: string, name: string) {
  const file = yield* FilesRepo.use((repo) => repo.get(fileId))
  if (Option.isNone(file) || file.value.name !== name) return Option.none()
  const blob = yield* Blob.use((store) => store.get(fileId))
  return Option.map(blob, (stored) => ({ file: file.value, bytes: stored.bytes }))
})

/** The public answer for a file: its bytes under the sniffed type; 404 unless id and name both match. */
export const serve = Effect.fn("Files.serve")(function*(fileId: string, name: string) {
  const found = yield* readPublic(fileId, name)
  if (Option.isNone(found)) return yield* new FileNotFound({})
  const { file, bytes } = found.value
  return HttpServerResponse.uint8Array(bytes, {
    contentType: file.contentType,
    headers: {
      "x-content-type-options": "nosniff",
      // A file never changes under its id: caches may keep it for a year.
      "cache-control": "public, max-age=31536000, immutable",
      "content-disposition": `inline; filename="${file.name}"`,
      "content-security-policy": "default-src 'none'"
    }
  })
})
