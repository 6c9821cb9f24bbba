import { Effect, Layer } from "effect"
import { answer } from "../../http/Refusals.ts"
import { TrackingApi } from "./TrackingApi.ts"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { AppConfig } from "../../platform/AppConfig.ts"
import { OutreachConfig } from "./OutreachConfig.ts"
import * as Tracking from "./Tracking.ts"
import { TrackingSecret } from "./TrackingSecret.ts"

const api = areaApi(TrackingApi)

/** Tracking answers must never be cached: each fetch is an event. */
const noStore = { "cache-control": "no-store, max-age=0" }

const html = (page: string) => HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8", headers: noStore })

/** The public links: no authentication middleware; the signed token is the credential. */
export const TrackingLive = HttpApiBuilder.group(api, "tracking", (handlers) =>
  Effect.gen(function*() {
    const secret = yield* TrackingSecret
    const { publicBaseUrl } = yield* AppConfig
    const signed = <A, E, R>(effect: Effect.Effect<A, E, R>) => answer(Effect.provideService(effect, TrackingSecret, secret))
    return handlers
      .handle("open", ({ params }) =>
        Effect.map(signed(Tracking.open(params.token)), (gif) =>
          HttpServerResponse.uint8Array(gif, { contentType: "image/gif", headers: noStore })))
      .handle("click", ({ params }) =>
        Effect.map(signed(Tracking.click(params.token, publicBaseUrl)), (target) =>
          HttpServerResponse.redirect(target, { status: 302, headers: noStore })))
      .handle("unsubscribePage", ({ params }) => Effect.map(signed(Tracking.unsubscribePage(params.token)), html))
      .handle("unsubscribe", ({ params }) => Effect.map(signed(Tracking.unsubscribe(params.token)), html))
  })).pipe(Layer.provide(TrackingSecret.layer), Layer.provide(OutreachConfig.layer))
