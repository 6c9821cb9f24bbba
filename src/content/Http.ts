import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import { authorize } from "../auth/Policy.ts"
import * as Content from "./Content.ts"
import { ContentPool } from "./ContentPool.ts"
import { SpamAssassin } from "./SpamAssassin.ts"

export const ContentLive = HttpApiBuilder.group(Api, "content", (handlers) =>
  Effect.gen(function*() {
    const pool = yield* ContentPool
    const spamAssassin = yield* SpamAssassin
    const withTools = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provideService(ContentPool, pool), Effect.provideService(SpamAssassin, spamAssassin))
    return handlers
      .handle("spamCheck", ({ payload }) => authorize("content:use")(withTools(Content.spamCheck(payload))))
      .handle("spintax", ({ payload }) => authorize("content:use")(withTools(Content.spintax(payload))))
  })
).pipe(Layer.provide([ContentPool.layer, SpamAssassin.layer]))
