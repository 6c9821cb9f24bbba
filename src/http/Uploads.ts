import { Effect } from "effect"
import { type HttpServerRequest, Multipart } from "effect/http"
import { BadRequest } from "../platform/Errors.ts"

/** An upload's file and its plain text fields (a field sent twice keeps its last value). */
export interface UploadedForm {
  readonly file: Multipart.PersistedFile
  readonly fields: Readonly<Record<string, string>>
}

/**
 * The one file of a multipart/form-data upload, persisted to a temporary file
 * for the enclosing scope, with the form's text fields. Limits are per
 * endpoint (they come from settings), so the endpoint reads the body itself
 * rather than through the HttpApi decoder, and every failure is a 400 naming
 * the problem.
 */
export const uploadedForm = (
  request: HttpServerRequest.HttpServerRequest,
  part: string,
  maxBytes: number
) =>
  Effect.gen(function*() {
    if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
      return yield* new BadRequest({ error: `Send multipart/form-data with the file in a part named "${part}"` })
    }
    const persisted = yield* request.multipart.pipe(
      Effect.provideContext(Multipart.limitsServices({
        maxParts: 8,
        maxFileSize: maxBytes,
        // The file plus the multipart framing and a few small fields.
        maxTotalSize: maxBytes + 64 * 1024,
        maxFieldSize: 64 * 1024
      })),
      Effect.catchTag("MultipartError", (error) =>
        Effect.fail(
          new BadRequest({
            error: error.reason._tag === "FileTooLarge" || error.reason._tag === "BodyTooLarge"
              ? `The file is too large: at most ${maxBytes} bytes`
              : error.reason._tag === "TooManyParts"
              ? "Too many parts in the multipart body"
              : "Malformed multipart body"
          })
        ))
    )
    const value = persisted[part]
    const files = Array.isArray(value) ? value.filter(Multipart.isPersistedFile) : []
    if (files.length === 0) return yield* new BadRequest({ error: `No file: send it in a part named "${part}"` })
    if (files.length > 1) return yield* new BadRequest({ error: `Send one file in the part "${part}"` })
    const fields: Record<string, string> = {}
    for (const [name, field] of Object.entries(persisted)) {
      if (typeof field === "string") fields[name] = field
      else if (field.length > 0 && typeof field[field.length - 1] === "string") fields[name] = field[field.length - 1] as string
    }
    return { file: files[0], fields } satisfies UploadedForm
  })

/** The one file of a multipart/form-data upload (`uploadedForm` without its fields). */
export const uploadedFile = (
  request: HttpServerRequest.HttpServerRequest,
  part: string,
  maxBytes: number
) => Effect.map(uploadedForm(request, part, maxBytes), (form) => form.file)
