import { Effect, Layer } from "effect"
import { ContentApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import * as Content from "./Content.ts"
import * as Engine from "./Engine.ts"
import { ContentResearch } from "./Research.ts"
import { ContentPool } from "./ContentPool.ts"
import { answer } from "../../http/Refusals.ts"
import { SpamAssassin } from "./SpamAssassin.ts"

const api = areaApi(ContentApi)

export const ContentLive = HttpApiBuilder.group(api, "content", (handlers) =>
  Effect.gen(function*() {
    const pool = yield* ContentPool
    const spamAssassin = yield* SpamAssassin
    const research = yield* ContentResearch
    const withTools = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provideService(ContentPool, pool), Effect.provideService(SpamAssassin, spamAssassin))
    return handlers
      .handle("spamCheck", ({ payload }) => withTools(answer(authorize("content:use")(Content.spamCheck(payload)))))
      .handle("spintax", ({ payload }) => withTools(answer(authorize("content:use")(Content.spintax(payload)))))
      .handle("generate", ({ payload }) => answer(authorize("content:use")(Engine.generate(payload))))
      .handle("research", ({ payload }) =>
        answer(authorize("content:use")(Effect.provideService(Engine.research(payload), ContentResearch, research))))
  })
).pipe(Layer.provide([ContentPool.layer, SpamAssassin.layer, ContentResearch.layer]))
