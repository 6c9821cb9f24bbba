import { ByteSize, Effect, Layer } from "effect"
import { HttpIncomingMessage, Multipart } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../http/Area.ts"
import { authorize } from "../auth/Policy.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { BadRequest } from "../platform/Errors.ts"
import { DocumentsApi, UploadLimits } from "./Api.ts"
import { ConversionPool } from "./ConversionPool.ts"
import * as Documents from "./Documents.ts"
import { answer } from "../http/Refusals.ts"

const api = areaApi(DocumentsApi)

/** Form fields beside the files (`companyId`, `generateSummary`) and some slack for the parser's count. */
const fieldParts = 4

/** The multipart parser's limits for this request, and its limit failures as 400 `{error}`. */
export const UploadLimitsLive = Layer.effect(UploadLimits, AppConfig.useSync(({ documents: settings }) => {
  const messages: Record<Multipart.MultipartError["reason"]["_tag"], string> = {
    TooManyParts: `Too many parts: at most ${settings.maxFiles} files per request`,
    FileTooLarge: `A file is larger than ${settings.maxFileBytes} bytes, the most per file`,
    FieldTooLarge: "A form field is too large",
    BodyTooLarge: `The upload is larger than ${settings.maxTotalBytes} bytes, the most per request`,
    Parse: "Malformed multipart body",
    InternalError: "The upload could not be read"
  }
  return (httpEffect) =>
    httpEffect.pipe(
      Effect.provideService(Multipart.MaxParts, settings.maxFiles + fieldParts),
      // Sizes are checked once a file is in, to name it; the parser only stops bodies well past the limits
      // (a file past the total, a body past the total plus one more file).
      Effect.provideService(Multipart.MaxFileSize, ByteSize.bytes(settings.maxTotalBytes)),
      Effect.provideService(Multipart.MaxFieldSize, ByteSize.kibibytes(64)),
      // Every part with a file name is a file, JSON ones included (by default `application/json` parts are fields).
      Effect.provideService(Multipart.FieldMimeTypes, []),
      Effect.provideService(
        HttpIncomingMessage.MaxBodySize,
        ByteSize.bytes(settings.maxTotalBytes + settings.maxFileBytes + 64 * 1024)
      ),
      Effect.catchDefect((defect) =>
        Multipart.isMultipartError(defect)
          ? Effect.fail(new BadRequest({ error: messages[defect.reason._tag] }))
          : Effect.die(defect)
      )
    )
}))

export const DocumentsLive = HttpApiBuilder.group(api, "documents", (handlers) =>
  Effect.map(ConversionPool, (pool) =>
    handlers.handle("convert", ({ payload }) =>
      answer(authorize("documents:convert")(Documents.convert({
        files: payload.files,
        companyId: payload.companyId,
        generateSummary: payload.generateSummary === "true"
      }))).pipe(Effect.provideService(ConversionPool, pool))))
).pipe(Layer.provide([UploadLimitsLive, ConversionPool.layer]))
