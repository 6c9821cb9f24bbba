import { Effect, Layer } from "effect"
import { WebApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { JobProvider } from "./JobProvider.ts"
import * as Jobs from "./Jobs.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(WebApi)

export const WebLive = HttpApiBuilder.group(api, "web", (handlers) =>
  Effect.gen(function*() {
    const provider = yield* JobProvider
    return handlers.handle("searchJobs", ({ query }) =>
      answer(authorize("jobs:search")(Effect.provideService(Jobs.search(query), JobProvider, provider))))
  })).pipe(Layer.provide(JobProvider.layer))
