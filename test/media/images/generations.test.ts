import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { imageSize } from "image-size"
import OpenAI from "openai"
import { Credits } from "../../../src/accounts/usage/Credits.ts"
import { loopbackServer, sdkClients, sdkError, serverUrl } from "../../support/LoopbackServer.ts"
import { startStubImagesProvider, type StubImagesProvider } from "../../support/StubImagesProvider.ts"
import { backends, type Tenant } from "../../support/TestServer.ts"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

class Stub extends Context.Service<Stub, StubImagesProvider>()("test/StubImagesProvider") {}

const creditsPerImage = 40

/** The service on a loopback port (for the OpenAI SDK) with the stub provider configured. */
const serverWithProvider = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    const stub = yield* Effect.acquireRelease(Effect.promise(() => startStubImagesProvider()), (s) => Effect.promise(s.close))
    return loopbackServer(storage, {
      images: { baseUrl: stub.url, apiKey: Option.some(Redacted.make(stub.key)), maxRetries: 0, creditsPerImage }
    }).pipe(Layer.merge(Layer.succeed(Stub, stub)))
  }))

/** The bytes behind a public URL the platform answered, fetched from the platform without a key. */
const publicBytes = (url: string) =>
  Effect.flatMap(serverUrl, (base) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}${new URL(url).pathname}`)
      return { status: response.status, type: response.headers.get("content-type"), bytes: new Uint8Array(await response.arrayBuffer()) }
    }))

const creditUsage = (tenant: Tenant) =>
  Effect.map(settledOrganization(tenant.organizationId), (organization) => Option.getOrThrow(organization).creditUsage)

describe.each(backends)("image generation on $name", ({ storage }) => {
  it.layer(serverWithProvider(storage), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("the OpenAI SDK's images.generate gets permanent public URLs of the provider's images", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const { openai } = yield* sdkClients("images-url")
        const result = yield* Effect.promise(() =>
          openai.images.generate({ model: "dall-e-3", prompt: "a red fox in the snow", size: "1024x1792" })
        )
        expect(stub.requests.at(-1)).toEqual({
          model: "dall-e-3", prompt: "a red fox in the snow", n: 1, size: "1024x1792", response_format: "b64_json"
        })
        expect(result.created).toBeGreaterThan(1_700_000_000)
        expect(result.data).toHaveLength(1)
        const [image] = result.data!
        expect(image.revised_prompt).toBe("A detailed picture of a red fox in the snow")
        expect(image.b64_json).toBeUndefined()
        expect(image.url).toMatch(/\/api\/v0\/public\/files\/fil_[0-9a-f]{32}\/image-1\.png$/)
        const served = yield* publicBytes(image.url!)
        expect(served).toMatchObject({ status: 200, type: "image/png" })
        expect(imageSize(served.bytes)).toMatchObject({ type: "png", width: 1024, height: 1792 })
      }))

    it.effect("b64_json answers the bytes themselves; gpt-image models get no response_format", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const { openai } = yield* sdkClients("images-b64")
        const result = yield* Effect.promise(() =>
          openai.images.generate({ model: "dall-e-2", prompt: "three dots", n: 3, size: "256x256", response_format: "b64_json" })
        )
        expect(result.data).toHaveLength(3)
        for (const image of result.data!) {
          expect(image.url).toBeUndefined()
          expect(imageSize(new Uint8Array(Buffer.from(image.b64_json!, "base64")))).toMatchObject({ type: "png", width: 256, height: 256 })
        }
        yield* Effect.promise(() => openai.images.generate({ model: "gpt-image-1", prompt: "a logo", size: "1024x1536" }))
        expect(stub.requests.at(-1)).toEqual({ model: "gpt-image-1", prompt: "a logo", n: 1, size: "1024x1536" })
      }))

    it.effect("bills each image under `images` at IMAGES_CREDITS_PER_IMAGE; a refused prompt costs nothing", () =>
      Effect.gen(function*() {
        const { tenant, openai } = yield* sdkClients("images-billing")
        const before = yield* creditUsage(tenant)
        yield* Effect.promise(() => openai.images.generate({ model: "dall-e-2", prompt: "two cats", n: 2, size: "256x256" }))
        expect((yield* creditUsage(tenant)) - before).toBe(2 * creditsPerImage)
        const events = yield* usageHistory(tenant.organizationId, { featureKey: "images" })
        expect(events.events.map((event) => [event.feature, event.model, event.credits, event.userId])).toEqual([
          ["images", "dall-e-2", 2 * creditsPerImage, tenant.userId]
        ])
        const refused = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "[refuse] something" }))
        expect(refused).toEqual({ status: 400, error: "The images provider: Your request was rejected as a result of our safety system." })
        const limited = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "[busy] something" }))
        expect(limited).toMatchObject({ status: 429, error: expect.stringMatching(/rate limiting/) })
        expect((yield* creditUsage(tenant)) - before).toBe(2 * creditsPerImage)
      }))

    it.effect("credits that cannot cover n images answer 403 before the provider is asked", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const { tenant, openai } = yield* sdkClients("images-poor")
        const organization = Option.getOrThrow(yield* settledOrganization(tenant.organizationId))
        const leave = creditsPerImage * 2
        const spend = organization.creditLimit - organization.creditUsage - leave
        const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }
        yield* Credits.use((credits) => credits.withHold(payer, { feature: "setup", credits: spend }, (hold) => hold.report({ credits: spend })))
        const asked = stub.requests.length
        const refused = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "many", n: 3 }))
        expect(refused).toEqual({ status: 403, error: "Insufficient credits" })
        expect(stub.requests.length).toBe(asked)
        const two = yield* Effect.promise(() => openai.images.generate({ model: "dall-e-2", prompt: "few", n: 2 }))
        expect(two.data).toHaveLength(2)
      }))

    it.effect("bad input answers 400 naming the problem, before the provider is asked", () =>
      Effect.gen(function*() {
        const stub = yield* Stub
        const { openai } = yield* sdkClients("images-bad")
        const asked = stub.requests.length
        const cases: ReadonlyArray<[OpenAI.ImageGenerateParams, RegExp]> = [
          [{ model: "dall-e-9", prompt: "x" }, /Unknown model "dall-e-9": image models are dall-e-2, dall-e-3, gpt-image-1/],
          [{ model: "dall-e-3", prompt: "x", n: 2 }, /"n": dall-e-3 makes at most 1 image/],
          [{ model: "dall-e-2", prompt: "x", size: "1792x1024" }, /"size": dall-e-2 makes 256x256, 512x512, 1024x1024/],
          [{ model: "dall-e-2", prompt: "x".repeat(1_001) }, /"prompt": dall-e-2 takes at most 1000 characters/],
          [{ model: "dall-e-2", prompt: "   " }, /prompt/],
          [{ model: "dall-e-2", prompt: "x", n: 11 }, /"n"/],
          [{ model: "dall-e-2", prompt: "x", response_format: "png" as "url" }, /response_format/]
        ]
        for (const [body, message] of cases) {
          const refused = yield* sdkError(() => openai.images.generate(body))
          expect(refused?.status).toBe(400)
          expect(refused?.error).toMatch(message)
        }
        expect(stub.requests.length).toBe(asked)
      }))

    it.effect("an image URL the provider answers goes through the outbound guard: an internal address is refused", () =>
      Effect.gen(function*() {
        const { openai } = yield* sdkClients("images-guard")
        const refused = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "[url] a boat" }))
        expect(refused).toMatchObject({ status: 500, error: expect.stringMatching(/could not be fetched: Refused to fetch http:\/\/127\.0\.0\.1:\d+: .*loopback/) })
        const garbage = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "[text] a boat" }))
        expect(garbage).toMatchObject({ status: 500, error: expect.stringMatching(/not a PNG, JPEG, GIF or WebP image/) })
      }))
  })

  it.layer(loopbackServer(storage), { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("without IMAGES_API_KEY, generation answers 403 naming the settings", () =>
      Effect.gen(function*() {
        const { openai } = yield* sdkClients("images-unconfigured")
        const refused = yield* sdkError(() => openai.images.generate({ model: "dall-e-2", prompt: "a tree" }))
        expect(refused).toEqual({
          status: 403,
          error: "Image generation is not configured: set IMAGES_API_KEY (and IMAGES_BASE_URL for a provider other than OpenAI)"
        })
      }))
  })
})
