import { Schema } from "effect"
import { described } from "../../http/Describe.ts"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { NotFound } from "../../platform/Errors.ts"

/** Public routes of uploaded files: no API key; the file id (128 random bits) is the secret. */
export class FilesApi extends HttpApiGroup.make("files")
  .annotateMerge(OpenApi.annotations({
    description: "Public files: uploaded images served without an API key under unguessable ids, for e-mail clients.",
    override: { "x-displayName": "Public files" }
  })).add(
  HttpApiEndpoint.get("publicFile", "/public/files/:fileId/:name", {
    params: { fileId: Schema.String, name: Schema.String },
    success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })),
    error: [NotFound]
  }).pipe(described({
    summary: "Fetch an uploaded file",
    does: "Public, without an API key (e-mail clients load images from here): the bytes of an uploaded image under its sniffed content type (image/png, image/jpeg, image/gif or image/webp), with X-Content-Type-Options: nosniff and a one-year immutable cache. The file id is unguessable; an unknown id, or a name that is not the file's, answers 404.",
    who: "public"
  }))
).prefix("/api/v0") {}
