import { Effect, type Semaphore } from "effect"
import type { HttpServerRequest } from "effect/http"
import { readFile } from "node:fs/promises"
import { Authorized } from "../../auth/Policy.ts"
import { publicUrl, storeImageBytes } from "../files/Files.ts"
import { uploadedForm } from "../../http/Uploads.ts"
import { newId } from "../../platform/Ids.ts"
import { currentDate } from "../../platform/Time.ts"
import { GuardedFetch, outboundRefusal } from "../../platform/Outbound.ts"
import { Credits, payerOf } from "../../accounts/usage/Credits.ts"
import type { ImageGenerationRequest } from "./Api.ts"
import {
  ImageProviderFailed,
  ImageProviderLimited,
  ImageProviderRejected,
  ImagesNotConfigured,
  InvalidImageRequest
} from "./Errors.ts"
import { ImagesConfig } from "./ImagesConfig.ts"
import { type ProviderImage, ImagesProvider } from "./ImagesProvider.ts"
import { transform, transformOptions } from "./Transform.ts"

/**
 * Image generation through the configured provider, billed per image and
 * stored at permanent public URLs; and transformation of uploads
 * (`Transform.ts`). Decisions in docs/images.md.
 */

interface ModelRules {
  readonly sizes: ReadonlyArray<string> | "any"
  readonly maxImages: number
  readonly maxPrompt: number
  /** Whether the model takes `response_format` (OpenAI's `gpt-image` models refuse it and always answer base64). */
  readonly takesResponseFormat: boolean
}

const gptImage: ModelRules = { sizes: ["auto", "1024x1024", "1536x1024", "1024x1536"], maxImages: 10, maxPrompt: 32_000, takesResponseFormat: false }

/** OpenAI's image models and what each makes. */
const openAiModels: Record<string, ModelRules> = {
  "dall-e-2": { sizes: ["256x256", "512x512", "1024x1024"], maxImages: 10, maxPrompt: 1_000, takesResponseFormat: true },
  "dall-e-3": { sizes: ["1024x1024", "1792x1024", "1024x1792"], maxImages: 1, maxPrompt: 4_000, takesResponseFormat: true },
  "gpt-image-1": gptImage,
  "gpt-image-1-mini": gptImage
}

/** A model of `IMAGES_MODELS`: `auto` or any size from 64 to 4096 pixels a side. */
const otherModel: ModelRules = { sizes: "any", maxImages: 10, maxPrompt: 32_000, takesResponseFormat: false }

const anySize = /^([1-9][0-9]{1,3})x([1-9][0-9]{1,3})$/

const invalid = (message: string) => new InvalidImageRequest({ message })

/** The request checked against its model's rules; answers the model's name and rules. */
const checked = (request: typeof ImageGenerationRequest.Type, extraModels: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const model = request.model ?? "dall-e-2"
    const rules = openAiModels[model] ?? (extraModels.includes(model) ? otherModel : undefined)
    if (rules === undefined) {
      return yield* invalid(`Unknown model "${model}": image models are ${[...Object.keys(openAiModels), ...extraModels].join(", ")}`)
    }
    const n = request.n ?? 1
    if (n > rules.maxImages) return yield* invalid(`Invalid field "n": ${model} makes at most ${rules.maxImages} image(s) per request`)
    if (request.prompt.length > rules.maxPrompt) {
      return yield* invalid(`Invalid field "prompt": ${model} takes at most ${rules.maxPrompt} characters`)
    }
    if (request.size !== undefined) {
      const size = request.size
      const fits = rules.sizes === "any"
        ? size === "auto" || (anySize.test(size) && size.split("x").every((side) => Number(side) >= 64 && Number(side) <= 4096))
        : rules.sizes.includes(size)
      if (!fits) {
        return yield* invalid(
          `Invalid field "size": ${model} makes ${rules.sizes === "any" ? "auto or WIDTHxHEIGHT from 64 to 4096 pixels a side" : rules.sizes.join(", ")}`
        )
      }
    }
    return { model, n, rules }
  })

const providerRefusal = outboundRefusal({ limited: ImageProviderLimited, rejected: ImageProviderRejected, failed: ImageProviderFailed })

/** The image's bytes: decoded from base64, or fetched through the outbound guard from the URL the provider gave. */
const bytesOf = (image: ProviderImage) =>
  Effect.gen(function*() {
    if (typeof image.b64_json === "string") return new Uint8Array(Buffer.from(image.b64_json, "base64"))
    if (typeof image.url !== "string") {
      return yield* new ImageProviderFailed({ message: "The images provider answered an image without data or URL" })
    }
    const guard = yield* GuardedFetch
    const page = yield* guard.fetch(image.url).pipe(
      Effect.mapError((error) => new ImageProviderFailed({ message: `The provider's image could not be fetched: ${error.message}` }))
    )
    if (page.status !== 200) {
      return yield* new ImageProviderFailed({ message: `The provider's image could not be fetched: it answered ${page.status}` })
    }
    return page.body
  })

export const generate = Effect.fn("Images.generate")(function*(request: typeof ImageGenerationRequest.Type) {
  const { principal } = yield* Authorized("images:use")
  const settings = yield* ImagesConfig
  const provider = yield* ImagesProvider
  const { model, n, rules } = yield* checked(request, settings.extraModels)
  if (!provider.configured) return yield* new ImagesNotConfigured({})
  const credits = yield* Credits
  const generationId = newId("igen")
  const estimate = { feature: "images", model, credits: n * settings.creditsPerImage }
  const images = yield* credits.withHold(payerOf(principal), estimate, (hold) =>
    Effect.gen(function*() {
      const answered = yield* provider.generate({
        model,
        prompt: request.prompt,
        n,
        size: request.size,
        quality: request.quality,
        style: request.style,
        response_format: rules.takesResponseFormat ? "b64_json" : undefined
      }).pipe(Effect.mapError(providerRefusal))
      if (answered.length === 0) return yield* new ImageProviderFailed({ message: "The images provider answered no image" })
      // The provider made (and charges for) what it answered, even if one of them cannot be stored.
      yield* hold.report({ credits: answered.length * settings.creditsPerImage })
      return yield* Effect.forEach(answered, (image, index) =>
        Effect.gen(function*() {
          const bytes = yield* bytesOf(image)
          const file = yield* storeImageBytes(principal.companyId, generationId, `image-${index + 1}`, bytes).pipe(
            Effect.mapError((refused) => new ImageProviderFailed({ message: `The images provider answered something unusable: ${refused.message}` }))
          )
          return { bytes, url: yield* publicUrl(file), revisedPrompt: image.revised_prompt ?? undefined }
        }))
    }))
  const now = yield* currentDate
  return {
    created: Math.floor(now.getTime() / 1000),
    data: images.map((image) => ({
      ...(request.response_format === "b64_json" ? { b64_json: Buffer.from(image.bytes).toString("base64") } : { url: image.url }),
      ...(image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt })
    }))
  }
})

/**
 * `/images/transform`: the uploaded image in part `file`, transformed as its
 * fields say. The upload streams to a temporary file; only `permits`
 * transforms at a time hold an image in memory (`IMAGE_TRANSFORMS`), so a
 * burst of large uploads waits instead of exhausting memory.
 */
export const transformUpload = Effect.fn("Images.transformUpload")(function*(
  request: HttpServerRequest.HttpServerRequest,
  permits: Semaphore.Semaphore
) {
  yield* Authorized("images:use")
  const settings = yield* ImagesConfig
  return yield* Effect.scoped(Effect.gen(function*() {
    const form = yield* uploadedForm(request, "file", settings.maxBytes)
    const options = yield* transformOptions(form.fields)
    return yield* permits.withPermits(1)(Effect.gen(function*() {
      const bytes = new Uint8Array(yield* Effect.promise(() => readFile(form.file.path)))
      return yield* transform(bytes, options, settings)
    }))
  }))
})
