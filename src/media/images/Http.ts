import { Effect, Layer, Semaphore } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { GuardedFetch } from "../../platform/Outbound.ts"
import { ImagesApi } from "./Api.ts"
import * as Images from "./Images.ts"
import { ImagesConfig } from "./ImagesConfig.ts"
import { ImagesProvider } from "./ImagesProvider.ts"

const api = areaApi(ImagesApi)

export const ImagesLive = HttpApiBuilder.group(api, "images", (handlers) =>
  Effect.gen(function*() {
    const provider = yield* ImagesProvider
    const guard = yield* GuardedFetch
    const transforms = yield* Semaphore.make((yield* ImagesConfig).transforms)
    return handlers
      .handle("generate", ({ payload }) =>
        authorizedAnswer("images:use")(
          Images.generate(payload).pipe(Effect.provideService(ImagesProvider, provider), Effect.provideService(GuardedFetch, guard))
        ))
      .handleRaw("transform", ({ request }) =>
        authorizedAnswer("images:use")(Effect.map(Images.transformUpload(request, transforms), (image) =>
          HttpServerResponse.uint8Array(image.bytes, {
            contentType: image.contentType,
            headers: { "x-content-type-options": "nosniff", "content-disposition": `inline; filename="image.${image.format}"` }
          }))))
  })).pipe(Layer.provide(Layer.mergeAll(ImagesProvider.layer, GuardedFetch.layer)))
