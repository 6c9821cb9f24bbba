import { Effect, Layer } from "effect"
import { ContentApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../http/Area.ts"
import { authorize } from "../auth/Policy.ts"
import * as Content from "./Content.ts"
import { ContentPool } from "./ContentPool.ts"
import { answer } from "../http/Refusals.ts"

const api = areaApi(ContentApi)

export const ContentLive = HttpApiBuilder.group(api, "content", (handlers) =>
  Effect.map(ContentPool, (pool) =>
    handlers
      .handle("spamCheck", ({ payload }) => answer(authorize("content:use")(Content.spamCheck(payload))).pipe(Effect.provideService(ContentPool, pool)))
      .handle("spintax", ({ payload }) => answer(authorize("content:use")(Content.spintax(payload))).pipe(Effect.provideService(ContentPool, pool))))
).pipe(Layer.provide(ContentPool.layer))
