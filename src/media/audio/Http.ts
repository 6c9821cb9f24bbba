import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { Ffmpeg } from "../../platform/Ffmpeg.ts"
import { AudioApi } from "./Api.ts"
import { LocalVoice } from "./LocalVoice.ts"
import * as Speech from "./Speech.ts"
import { SpeechProvider } from "./SpeechProvider.ts"

const api = areaApi(AudioApi)

export const AudioLive = HttpApiBuilder.group(api, "audio", (handlers) =>
  Effect.gen(function*() {
    const provider = yield* SpeechProvider
    const local = yield* LocalVoice
    const ffmpeg = yield* Ffmpeg
    const withVoices = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(SpeechProvider, provider),
        Effect.provideService(LocalVoice, local),
        Effect.provideService(Ffmpeg, ffmpeg)
      )
    return handlers
      .handle("speech", ({ payload }) =>
        authorizedAnswer("audio:use")(
          withVoices(Speech.speak(payload)).pipe(
            Effect.map((audio) =>
              HttpServerResponse.uint8Array(audio.bytes, {
                contentType: audio.contentType,
                headers: { "content-disposition": `inline; filename="speech.${audio.format}"` }
              }))
          )
        ))
      .handle("voices", () => authorizedAnswer("audio:use")(Effect.map(withVoices(Speech.voices), (list) => ({ voices: list }))))
  })).pipe(Layer.provide(Layer.mergeAll(SpeechProvider.layer, LocalVoice.layer, Ffmpeg.layer)))
