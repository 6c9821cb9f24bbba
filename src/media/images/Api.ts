import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { acceptingUnknownFields } from "../../http/StrictInput.ts"
import { BadRequest, Forbidden, InternalError, RateLimited } from "../../platform/Errors.ts"
import { NonBlankText } from "../../platform/Schemas.ts"

/** OpenAI's `POST /v1/images/generations` body (docs/images.md: what each field does here). */
export const ImageGenerationRequest = Schema.Struct({
  model: Schema.optional(Schema.String).annotate({ description: "`dall-e-2` (default), `dall-e-3`, `gpt-image-1`, or a model of `IMAGES_MODELS`" }),
  prompt: NonBlankText(32_000).annotate({ description: "What to draw" }),
  n: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(10)))
    .annotate({ description: "How many images, 1–10 (`dall-e-3`: 1)" }),
  size: Schema.optional(Schema.String).annotate({ description: "`WIDTHxHEIGHT` among the model's sizes, or `auto`" }),
  response_format: Schema.optional(Schema.Literals(["url", "b64_json"]))
    .annotate({ description: "`url` (default): a permanent public URL; `b64_json`: the bytes in base64 (stored at a URL too)" }),
  quality: Schema.optional(Schema.String).annotate({ description: "Passed to the provider as is" }),
  style: Schema.optional(Schema.String).annotate({ description: "Passed to the provider as is (`dall-e-3`)" })
}).annotate({ identifier: "ImageGenerationRequest" })

export const GeneratedImage = Schema.Struct({
  url: Schema.optional(Schema.String),
  b64_json: Schema.optional(Schema.String),
  revised_prompt: Schema.optional(Schema.String)
}).annotate({ identifier: "GeneratedImage" })

export const ImagesResponse = Schema.Struct({
  /** Unix seconds, as OpenAI answers. */
  created: Schema.Int,
  data: Schema.Array(GeneratedImage)
}).annotate({ identifier: "ImagesResponse" })

export const TransformUpload = Schema.Struct({
  file: Multipart.FilesSchema,
  width: Schema.optional(Schema.String),
  height: Schema.optional(Schema.String),
  fit: Schema.optional(Schema.String),
  format: Schema.optional(Schema.String),
  quality: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.asMultipart())

const errors = [BadRequest, Forbidden, RateLimited, InternalError]

/** OpenAI's body shape: unknown fields are accepted and ignored, as on the model gateway. */
export class ImagesApi extends HttpApiGroup.make("images")
  .annotateMerge(OpenApi.annotations({
    description: "Images: generation through an OpenAI-compatible provider (for OpenAI SDKs pointed at `/api/v0`), stored at permanent public URLs; resizing and re-encoding of uploads.",
    override: { "x-displayName": "Images" }
  })).add(
  HttpApiEndpoint.post("generate", "/images/generations", {
    payload: ImageGenerationRequest,
    success: ImagesResponse,
    error: errors
  }).pipe(described({
    summary: "Generate images",
    does: "OpenAI's images API: the prompt goes to the configured OpenAI-compatible images provider (`IMAGES_BASE_URL`, `IMAGES_API_KEY`); each image is stored and answered at a permanent public URL (`/api/v0/public/files/…`), or in base64 with `response_format: b64_json`. Billed per image under `images` (`IMAGES_CREDITS_PER_IMAGE`), held before the provider is asked and charged for the images it returned. Unknown fields are ignored, as OpenAI's API grows.",
    who: "images:use",
    errors: {
      400: "an unknown model, a size the model does not make, more images than the model makes, or a prompt the provider refuses",
      403: "the role or plan lacks `images`, the organization's credits do not cover the images, or no provider is configured (`IMAGES_API_KEY`)",
      429: "the provider kept rate limiting",
      500: "the provider failed or answered something that is not an image"
    }
  })),
  HttpApiEndpoint.post("transform", "/images/transform", {
    payload: TransformUpload,
    success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "image/*" })),
    error: errors
  }).pipe(described({
    summary: "Resize and re-encode an image",
    does: "multipart/form-data with the image in part `file` and optional fields `width`, `height` (pixels), `fit` (`cover` — the default when both are given —, `contain`, `fill`, `inside`, `outside`), `format` (`png`, `jpeg`, `webp`, `avif`; default: the input's, PNG for GIF and TIFF) and `quality` (1–100). Answers the image's bytes. The input's type is read from its bytes; it may be at most IMAGE_MAX_BYTES and declare at most IMAGE_MAX_PIXELS pixels, and the result at most IMAGE_MAX_DIMENSION pixels a side.",
    who: "images:use",
    errors: { 400: "no file, not an image, a damaged image, a file or image past the caps, or a bad field (named)" }
  }))
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}
