import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import { authorize } from "../auth/Policy.ts"
import { JobProvider } from "./JobProvider.ts"
import * as Jobs from "./Jobs.ts"
import { answer } from "../http/Refusals.ts"

export const WebLive = HttpApiBuilder.group(Api, "web", (handlers) =>
  Effect.gen(function*() {
    const provider = yield* JobProvider
    return handlers.handle("searchJobs", ({ query }) =>
      answer(authorize("jobs:search")(Effect.provideService(Jobs.search(query), JobProvider, provider))))
  })).pipe(Layer.provide(JobProvider.layer))
