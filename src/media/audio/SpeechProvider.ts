import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { exchange, OutboundError, outboundClient } from "../../platform/Outbound.ts"
import { AudioConfig } from "./AudioConfig.ts"

/** OpenAI's speech body, as sent to the provider. */
export interface SpeechRequest {
  readonly model: string
  readonly input: string
  readonly voice: string
  readonly response_format: string
  readonly speed: number
}

export interface ProviderAudio {
  readonly bytes: Uint8Array
  readonly contentType: string | undefined
}

/**
 * The OpenAI-compatible speech provider (`POST …/audio/speech`) at
 * `SPEECH_BASE_URL`, or OpenAI's with `SPEECH_API_KEY` alone; called like the
 * model providers: an operator-configured address, with the outbound retry
 * policy and timeout. Not configured when neither is set: the local voice
 * speaks instead.
 */
export class SpeechProvider extends Context.Service<SpeechProvider, {
  readonly configured: boolean
  readonly speak: (request: SpeechRequest) => Effect.Effect<ProviderAudio, OutboundError>
}>()("audio/SpeechProvider") {
  static readonly layer = Layer.effect(
    SpeechProvider,
    Effect.gen(function*() {
      const settings = yield* AudioConfig
      const client = yield* HttpClient.HttpClient
      const base = Option.getOrElse(settings.baseUrl, () => "https://api.openai.com/v1")
      const endpoint = new URL("audio/speech", base.endsWith("/") ? base : `${base}/`)
      const read = (response: HttpClientResponse.HttpClientResponse) =>
        response.arrayBuffer.pipe(
          Effect.mapError(() => new OutboundError({ kind: "unavailable", message: "The speech provider's audio broke off" })),
          Effect.flatMap((body) =>
            body.byteLength > settings.maxBytes
              ? Effect.fail(new OutboundError({ kind: "unavailable", message: `The speech provider answered more than ${settings.maxBytes} bytes (SPEECH_MAX_BYTES)` }))
              : Effect.succeed({ bytes: new Uint8Array(body), contentType: response.headers["content-type"] }))
        )
      return {
        configured: Option.isSome(settings.baseUrl) || Option.isSome(settings.apiKey),
        speak: (body) => {
          const request = HttpClientRequest.post(endpoint.toString()).pipe(
            (unsigned) => Option.match(settings.apiKey, {
              onNone: () => unsigned,
              onSome: (key) => HttpClientRequest.bearerToken(unsigned, Redacted.value(key))
            }),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
          return exchange(client, request, {
            service: "The speech provider",
            timeoutMs: settings.timeoutMs,
            maxRetries: settings.maxRetries,
            read
          })
        }
      }
    })
  ).pipe(Layer.provide(outboundClient(NodeHttpClient.layerDispatcher)))
}
