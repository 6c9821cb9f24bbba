import { ByteSize, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpServerRequest, Multipart } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { BadRequest } from "../../platform/Errors.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { DocumentsApi, KnowledgeApi, KnowledgeUploadLimits, UploadLimits } from "./Api.ts"
import { ConversionPool } from "./ConversionPool.ts"
import { DocumentsConfig } from "./DocumentsConfig.ts"
import * as Documents from "./Documents.ts"
import { EmbeddingsModel } from "./EmbeddingsModel.ts"
import * as Knowledge from "./Knowledge.ts"
import { KnowledgeConfig } from "./KnowledgeConfig.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(DocumentsApi, KnowledgeApi)

/** Form fields beside the files (`companyId`, `generateSummary`) and some slack for the parser's count. */
const fieldParts = 4

/** The multipart parser's limits for this request, and its limit failures as 400 `{error}`. */
export const UploadLimitsLive = Layer.effect(UploadLimits, DocumentsConfig.useSync((settings) => {
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

/** The upload limits of `/documents/convert` for multipart requests; other bodies keep the service's limit. */
const KnowledgeUploadLimitsLive = Layer.effect(KnowledgeUploadLimits, Effect.gen(function*() {
  const multipartLimits = yield* UploadLimits
  return (httpEffect, options) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      (request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/") ? multipartLimits(httpEffect, options) : httpEffect)
})).pipe(Layer.provide(UploadLimitsLive))

/** The knowledge model and settings the endpoints and the indexer share, from the environment. */
export const KnowledgeSettingsLive = EmbeddingsModel.layer.pipe(Layer.provideMerge(KnowledgeConfig.layer))

export const KnowledgeLive = HttpApiBuilder.group(api, "knowledge", (handlers) =>
  Effect.gen(function*() {
    const pool = yield* ConversionPool
    const model = yield* EmbeddingsModel
    const withServices = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provideService(ConversionPool, pool), Effect.provideService(EmbeddingsModel, model))
    return handlers
      .handle("create", ({ payload }) =>
        withServices(
          "files" in payload
            ? answer(authorize("documents:write")(authorize("documents:convert")(Knowledge.upload(payload))))
            : answer(authorize("documents:write")(Knowledge.create(payload)))
        ))
      .handle("list", ({ query }) =>
        answer(authorize("documents:read")(Knowledge.list(pageRequest(query), { search: query.search, tag: query.tag, projectId: query.projectId }))))
      .handle("get", ({ params }) => answer(authorize("documents:read")(Knowledge.get(params.documentId))))
      .handle("getContent", ({ params }) => answer(authorize("documents:read")(Knowledge.content(params.documentId))))
      .handle("delete", ({ params }) => answer(authorize("documents:write")(Knowledge.remove(params.documentId))))
      .handle("search", ({ payload }) => withServices(answer(authorize("documents:read")(Knowledge.search(payload)))))
  })
).pipe(Layer.provide([KnowledgeUploadLimitsLive, ConversionPool.layer, KnowledgeSettingsLive]))
