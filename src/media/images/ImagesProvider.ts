import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { exchange, OutboundError, outboundClient } from "../../platform/Outbound.ts"
import { ImagesConfig } from "./ImagesConfig.ts"

/** One image as the provider answered it: its bytes in base64, or a URL to fetch them from. */
const ProviderImage = Schema.Struct({
  b64_json: Schema.optional(Schema.NullOr(Schema.String)),
  url: Schema.optional(Schema.NullOr(Schema.String)),
  revised_prompt: Schema.optional(Schema.NullOr(Schema.String))
})
export type ProviderImage = typeof ProviderImage.Type

const ProviderAnswer = Schema.Struct({ data: Schema.Array(ProviderImage) })

/** What is sent to the provider: OpenAI's body. */
export interface ProviderRequest {
  readonly model: string
  readonly prompt: string
  readonly n: number
  readonly size?: string | undefined
  readonly quality?: string | undefined
  readonly style?: string | undefined
  /** OpenAI's `dall-e-*` models take `b64_json`; the `gpt-image` ones always answer base64 and refuse the field. */
  readonly response_format?: "b64_json" | undefined
}

/**
 * The OpenAI-compatible images provider at `IMAGES_BASE_URL`
 * (`POST …/images/generations`), called like the model providers: an
 * operator-configured address, with the outbound retry policy and timeout.
 * Not configured when `IMAGES_API_KEY` is unset.
 */
export class ImagesProvider extends Context.Service<ImagesProvider, {
  readonly configured: boolean
  readonly generate: (request: ProviderRequest) => Effect.Effect<ReadonlyArray<ProviderImage>, OutboundError>
}>()("images/ImagesProvider") {
  static readonly layer = Layer.effect(
    ImagesProvider,
    Effect.gen(function*() {
      const settings = yield* ImagesConfig
      const client = yield* HttpClient.HttpClient
      const endpoint = new URL("images/generations", settings.baseUrl.endsWith("/") ? settings.baseUrl : `${settings.baseUrl}/`)
      return {
        configured: Option.isSome(settings.apiKey),
        generate: (body) => {
          const apiKey = Option.match(settings.apiKey, { onNone: () => "", onSome: Redacted.value })
          const request = HttpClientRequest.post(endpoint.toString()).pipe(
            HttpClientRequest.bearerToken(apiKey),
            HttpClientRequest.acceptJson,
            HttpClientRequest.bodyJsonUnsafe(body)
          )
          return exchange(client, request, {
            service: "The images provider",
            timeoutMs: settings.timeoutMs,
            maxRetries: settings.maxRetries,
            read: readImages
          })
        }
      }
    })
  ).pipe(Layer.provide(outboundClient(NodeHttpClient.layerDispatcher)))
}

const unreadable = new OutboundError({ kind: "unavailable", message: "The images provider sent an unreadable answer" })

const readImages = (response: HttpClientResponse.HttpClientResponse) =>
  response.json.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(ProviderAnswer)),
    Effect.map((answer) => answer.data),
    Effect.mapError(() => unreadable)
  )
