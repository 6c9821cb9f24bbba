import { Effect, Schema } from "effect"
import { fileTypeFromBuffer } from "file-type"
import sharp from "sharp"
import { InvalidImageRequest } from "./Errors.ts"
import type { ImagesSettings } from "./ImagesConfig.ts"

/**
 * `/images/transform`: resize, fit, re-encode with `sharp` (libvips). The
 * input's type is sniffed from its bytes (`file-type`), never taken from the
 * upload's declared type or name; its declared dimensions are read from the
 * header and checked against `IMAGE_MAX_PIXELS` before any pixel is decoded
 * (sharp's `limitInputPixels` stays on as a second fence). libvips works on
 * libuv's thread pool, so the request thread never decodes or encodes.
 */

/** What sharp reads, by sniffed type, and the output format each defaults to. */
const inputFormats: Record<string, OutputFormat> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/gif": "png",
  "image/tiff": "png"
}

export const outputFormats = ["png", "jpeg", "webp", "avif"] as const
export type OutputFormat = (typeof outputFormats)[number]

export const fits = ["cover", "contain", "fill", "inside", "outside"] as const

const contentTypes: Record<OutputFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
  avif: "image/avif"
}

/** The form fields of a transform, as text (multipart fields are text). */
const Dimension = Schema.FiniteFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1))
export const TransformFields = Schema.Struct({
  width: Schema.optional(Dimension),
  height: Schema.optional(Dimension),
  fit: Schema.optional(Schema.Literals(fits)),
  format: Schema.optional(Schema.Literals(outputFormats)),
  quality: Schema.optional(
    Schema.FiniteFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(100))
  )
})
export type TransformOptions = typeof TransformFields.Type

const fieldRules: Record<keyof TransformOptions, string> = {
  width: "must be a whole number of pixels, at least 1",
  height: "must be a whole number of pixels, at least 1",
  fit: `must be one of ${fits.join(", ")}`,
  format: `must be one of ${outputFormats.join(", ")}`,
  quality: "must be a whole number from 1 to 100"
}

/** The form's fields as options; an unknown field or a bad value is refused, naming it. */
export const transformOptions = (fields: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    for (const [name, value] of Object.entries(fields)) {
      if (!(name in fieldRules)) return yield* new InvalidImageRequest({ message: `Unknown field "${name}"` })
      const rule = fieldRules[name as keyof TransformOptions]
      const decoded = Schema.decodeUnknownOption(TransformFields.fields[name as keyof TransformOptions])(value)
      if (decoded._tag === "None") {
        return yield* new InvalidImageRequest({ message: `Invalid field "${name}": ${rule} (got ${JSON.stringify(value.slice(0, 40))})` })
      }
    }
    return yield* Schema.decodeUnknownEffect(TransformFields)(fields).pipe(
      Effect.mapError((error) => new InvalidImageRequest({ message: `Invalid fields: ${error.message}` }))
    )
  })

export interface TransformedImage {
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly format: OutputFormat
  readonly width: number
  readonly height: number
}

const refuse = (message: string) => new InvalidImageRequest({ message })

/**
 * The size sharp's resize will produce from an upright `width`×`height`,
 * computed before any pixel is decoded, so that a thin image widened to the
 * cap cannot grow into gigapixels.
 */
export const outputSize = (width: number, height: number, options: TransformOptions) => {
  const [w, h] = [options.width, options.height]
  if (w === undefined && h === undefined) return { width, height }
  if (w === undefined) return { width: Math.max(1, Math.round((width * h!) / height)), height: h! }
  if (h === undefined) return { width: w, height: Math.max(1, Math.round((height * w) / width)) }
  if (options.fit === "inside" || options.fit === "outside") {
    const pick = options.fit === "inside" ? Math.min : Math.max
    const scale = pick(w / width, h / height)
    return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) }
  }
  return { width: w, height: h }
}

/** The transformed image; a non-image, a damaged image or one past the caps is refused, naming why. */
export const transform = Effect.fn("Images.transform")(function*(
  bytes: Uint8Array,
  options: TransformOptions,
  limits: Pick<ImagesSettings, "maxInputPixels" | "maxDimension">
) {
  if (bytes.length === 0) return yield* refuse("The file is empty")
  const sniffed = yield* Effect.promise(() => fileTypeFromBuffer(bytes))
  const defaultFormat = sniffed === undefined ? undefined : inputFormats[sniffed.mime]
  if (sniffed === undefined || defaultFormat === undefined) {
    return yield* refuse(
      `The file is not a PNG, JPEG, WebP, AVIF, GIF or TIFF image (its content is ${sniffed?.mime ?? "not a known file type"})`
    )
  }
  for (const side of ["width", "height"] as const) {
    const value = options[side]
    if (value !== undefined && value > limits.maxDimension) {
      return yield* refuse(`Invalid field "${side}": at most ${limits.maxDimension} pixels (IMAGE_MAX_DIMENSION), got ${value}`)
    }
  }
  // The header's dimensions alone: nothing is decoded yet.
  const header = yield* Effect.tryPromise({
    try: () => sharp(bytes, { limitInputPixels: false }).metadata(),
    catch: () => refuse(`The ${sniffed.ext.toUpperCase()} image is damaged: its header cannot be read`)
  })
  if (!(header.width > 0 && header.height > 0)) {
    return yield* refuse(`The ${sniffed.ext.toUpperCase()} image is damaged: its dimensions cannot be read`)
  }
  const pixels = header.width * header.height
  if (pixels > limits.maxInputPixels) {
    return yield* refuse(
      `The image declares ${header.width}×${header.height} pixels (${pixels}); at most ${limits.maxInputPixels} pixels (IMAGE_MAX_PIXELS) are accepted`
    )
  }
  // EXIF orientations 5 to 8 turn the image a quarter: `rotate()` swaps its sides.
  const quarterTurned = (header.orientation ?? 1) >= 5
  const [uprightWidth, uprightHeight] = quarterTurned ? [header.height, header.width] : [header.width, header.height]
  const planned = outputSize(uprightWidth, uprightHeight, options)
  if (planned.width > limits.maxDimension || planned.height > limits.maxDimension) {
    return yield* refuse(
      `The result would be ${planned.width}×${planned.height} pixels; at most ${limits.maxDimension} a side (IMAGE_MAX_DIMENSION): give a smaller width or height`
    )
  }
  if (planned.width * planned.height > limits.maxInputPixels) {
    return yield* refuse(
      `The result would be ${planned.width}×${planned.height} pixels; at most ${limits.maxInputPixels} pixels (IMAGE_MAX_PIXELS)`
    )
  }
  const format = options.format ?? defaultFormat
  const resized = yield* Effect.tryPromise({
    try: () =>
      sharp(bytes, { limitInputPixels: limits.maxInputPixels, failOn: "error" })
        .rotate()
        .resize({ width: options.width, height: options.height, fit: options.fit })
        .toFormat(format, options.quality === undefined ? {} : { quality: options.quality })
        .toBuffer({ resolveWithObject: true }),
    catch: (error) => refuse(`The ${sniffed.ext.toUpperCase()} image cannot be processed: ${(error as Error).message}`)
  })
  return {
    bytes: new Uint8Array(resized.data),
    contentType: contentTypes[format],
    format,
    width: resized.info.width,
    height: resized.info.height
  } satisfies TransformedImage
})
