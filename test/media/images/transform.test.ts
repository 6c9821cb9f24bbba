import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { imageSize } from "image-size"
import sharp from "sharp"
import { longestTurn } from "../../support/EventLoop.ts"
import { expectErrorResponse, type RawResponse } from "../../support/Http.ts"
import { png } from "../../support/Images.ts"
import { addPerson, backends, seedTenant, testServer } from "../../support/TestServer.ts"

const maxBytes = 4 * 1024 * 1024

interface ImageResponse extends RawResponse {
  readonly bytes: Uint8Array
}

/** A company key, or a personal access key with the company it acts in. */
type Caller = string | { readonly personalAccessKey: string; readonly companyId: string }

/** POSTs a transform form with `file` and the given fields, answering the raw bytes too. */
const transform = (caller: Caller, file: Uint8Array, fields: Record<string, string> = {}, declared = "image/png") =>
  Effect.gen(function*() {
    const form = new FormData()
    form.append("file", new Blob([new Uint8Array(file)], { type: declared }), "upload.png")
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(
      HttpClientRequest.post("/api/v0/images/transform").pipe(
        HttpClientRequest.setHeaders(
          typeof caller === "string"
            ? { "x-api-key": caller }
            : { "x-api-key": caller.personalAccessKey, "x-company-id": caller.companyId }
        ),
        HttpClientRequest.bodyFormData(form)
      )
    )
    const bytes = new Uint8Array(yield* response.arrayBuffer)
    const text = new TextDecoder().decode(bytes)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, text, body, bytes } satisfies ImageResponse
  }).pipe(Effect.orDie)

/** A photo-like image (noise compresses badly, as photos do). */
const noisy = (width: number, height: number, format: "png" | "jpeg" = "png") =>
  Effect.promise(() =>
    sharp({ create: { width, height, channels: 3, background: "#336699", noise: { type: "gaussian", mean: 128, sigma: 40 } } })
      .toFormat(format)
      .toBuffer()
      .then((buffer) => new Uint8Array(buffer))
  )

const magic = (bytes: Uint8Array) => ({
  png: Buffer.from(bytes.slice(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  jpeg: bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff,
  webp: Buffer.from(bytes.slice(0, 4)).toString("latin1") === "RIFF" && Buffer.from(bytes.slice(8, 12)).toString("latin1") === "WEBP",
  avif: Buffer.from(bytes.slice(4, 12)).toString("latin1") === "ftypavif"
})

/** A PNG whose header declares `width`×`height` pixels, with almost no data: a decompression bomb's shape. */
const declaredPng = (width: number, height: number) => {
  const image = Buffer.from(png(1, 1))
  image.writeUInt32BE(width, 16)
  image.writeUInt32BE(height, 20)
  return new Uint8Array(image)
}

describe.each(backends)("image transform on $name", ({ storage }) => {
  it.layer(testServer(storage, { images: { maxBytes, maxInputPixels: 20_000_000, maxDimension: 4_000, transforms: 2 } }), { timeout: 60_000 })((it) => {
    it.effect("resizes and re-encodes to each format: real bytes, real dimensions", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const source = yield* noisy(400, 300)
        const cases = [
          [{ width: "200", format: "webp" }, "webp", "image/webp", 200, 150],
          [{ height: "60", format: "jpeg", quality: "40" }, "jpeg", "image/jpeg", 80, 60],
          [{ width: "64", height: "64", format: "avif" }, "avif", "image/avif", 64, 64],
          [{ width: "100", height: "100", fit: "inside" }, "png", "image/png", 100, 75],
          [{ width: "100", height: "100", fit: "outside" }, "png", "image/png", 133, 100],
          [{ width: "100", height: "50", fit: "fill" }, "png", "image/png", 100, 50]
        ] as const
        for (const [fields, format, contentType, width, height] of cases) {
          const response = yield* transform(tenant.apiKey, source, fields)
          expect(response.status).toBe(200)
          expect(response.headers["content-type"]).toBe(contentType)
          expect(magic(response.bytes)[format]).toBe(true)
          const metadata = yield* Effect.promise(() => sharp(response.bytes).metadata())
          expect([metadata.width, metadata.height]).toEqual([width, height])
          if (format !== "avif") expect(imageSize(response.bytes)).toMatchObject({ width, height })
        }
      }))

    it.effect("quality changes the bytes; without a format the sniffed input type is kept", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const source = yield* noisy(300, 200, "jpeg")
        const low = yield* transform(tenant.apiKey, source, { quality: "10" })
        const high = yield* transform(tenant.apiKey, source, { quality: "95" })
        expect(magic(low.bytes).jpeg && magic(high.bytes).jpeg).toBe(true)
        expect(low.bytes.length * 3).toBeLessThan(high.bytes.length)
        // Declared a PNG, named .png, but the bytes are a JPEG: the answer is a JPEG.
        const lying = yield* transform(tenant.apiKey, source, { width: "30" }, "image/png")
        expect(lying.headers["content-type"]).toBe("image/jpeg")
        expect(imageSize(lying.bytes)).toMatchObject({ width: 30, height: 20, type: "jpg" })
      }))

    it.effect("what is not an image, or is damaged or empty, answers 400 naming the problem", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const pdf = new TextEncoder().encode("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
        expectErrorResponse(yield* transform(tenant.apiKey, pdf), 400, /not a PNG, JPEG, WebP, AVIF, GIF or TIFF image \(its content is application\/pdf\)/)
        expectErrorResponse(yield* transform(tenant.apiKey, new TextEncoder().encode("just text")), 400, /not a known file type/)
        expectErrorResponse(yield* transform(tenant.apiKey, new Uint8Array(0)), 400, /empty/)
        const truncated = (yield* noisy(200, 200)).slice(0, 400)
        expectErrorResponse(yield* transform(tenant.apiKey, truncated), 400, /PNG image cannot be processed/)
      }))

    it.effect("a decompression bomb (a tiny PNG declaring 100,000×100,000 pixels) answers 400 naming the limit, at once", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const bomb = declaredPng(100_000, 100_000)
        expect(bomb.length).toBeLessThan(100)
        const started = performance.now()
        const response = yield* transform(tenant.apiKey, bomb, { width: "10" })
        expectErrorResponse(response, 400, /declares 100000×100000 pixels .*at most 20000000 pixels \(IMAGE_MAX_PIXELS\)/)
        expect(performance.now() - started).toBeLessThan(2_000)
      }))

    it.effect("caps: file bytes, output sides, and a thin image widened past the cap", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        expectErrorResponse(yield* transform(tenant.apiKey, new Uint8Array(maxBytes + 1)), 400, `at most ${maxBytes} bytes`)
        const small = yield* noisy(40, 30)
        expectErrorResponse(yield* transform(tenant.apiKey, small, { width: "4001" }), 400, /"width": at most 4000 pixels \(IMAGE_MAX_DIMENSION\)/)
        // 1×400 widened to 4000: 1.6 million pixels tall if it were allowed.
        const thin = yield* noisy(1, 400)
        expectErrorResponse(yield* transform(tenant.apiKey, thin, { width: "4000" }), 400, /result would be 4000×1600000 pixels/)
      }))

    it.effect("bad fields answer 400 naming the field; unknown fields too", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const source = yield* noisy(20, 20)
        const cases = [
          [{ fit: "squash" }, /Invalid field "fit": must be one of cover, contain, fill, inside, outside/],
          [{ format: "bmp" }, /Invalid field "format": must be one of png, jpeg, webp, avif/],
          [{ quality: "0" }, /Invalid field "quality": must be a whole number from 1 to 100/],
          [{ width: "abc" }, /Invalid field "width"/],
          [{ height: "1.5" }, /Invalid field "height"/],
          [{ colour: "red" }, /Unknown field "colour"/]
        ] as const
        for (const [fields, message] of cases) expectErrorResponse(yield* transform(tenant.apiKey, source, fields), 400, message)
      }))

    it.effect("a viewer, or a user without the images feature, answers 403", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const source = yield* noisy(20, 20)
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const narrowed = yield* addPerson(tenant, { companyRole: "member", allowedFeatures: ["chat"] })
        const { companyId } = tenant
        expectErrorResponse(yield* transform({ personalAccessKey: viewer.personalAccessKey, companyId }, source), 403, /role \(viewer\)/)
        expectErrorResponse(yield* transform({ personalAccessKey: narrowed.personalAccessKey, companyId }, source), 403, /images feature/)
      }))

    it.effect("concurrent transforms past IMAGE_TRANSFORMS wait their turn and each gets its own result", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const source = yield* noisy(600, 400)
        const widths = [60, 120, 180, 240, 300, 360]
        const responses = yield* Effect.forEach(widths, (width) => transform(tenant.apiKey, source, { width: String(width), format: "jpeg" }), {
          concurrency: "unbounded"
        })
        expect(responses.map((response) => [response.status, imageSize(response.bytes).width, imageSize(response.bytes).height])).toEqual(
          widths.map((width) => [200, width, (width * 2) / 3])
        )
      }))

    it.effect("a large photo is decoded and encoded off the request thread: no event-loop stall over 50 ms", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const photo = yield* noisy(1_800, 1_800, "jpeg")
        const { result: response, longestMs } = yield* longestTurn(
          transform(tenant.apiKey, photo, { width: "1600", format: "webp", quality: "80" })
        )
        expect(response.status).toBe(200)
        expect(imageSize(response.bytes)).toMatchObject({ width: 1600, height: 1600, type: "webp" })
        // The client's encoding and the server's multipart parsing share this thread; the pixels never do.
        expect(longestMs).toBeLessThan(50)
      }))
  })
})
