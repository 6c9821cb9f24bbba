import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { GuardedFetch } from "../../platform/Outbound.ts"
import { OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { WebhooksApi } from "./Api.ts"
import * as Webhooks from "./Webhooks.ts"

const api = areaApi(WebhooksApi)

export const WebhooksLive = HttpApiBuilder.group(api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const guard = yield* GuardedFetch
    const outbound = yield* OutboundConfig
    // URLs are checked with the outbound guard's rules.
    const guarded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provideService(GuardedFetch, guard), Effect.provideService(OutboundConfig, outbound))
    return handlers
      .handle("create", ({ payload }) => guarded(answer(authorize("webhooks:manage")(Webhooks.create(payload)))))
      .handle("list", ({ query }) => answer(authorize("webhooks:manage")(Webhooks.list(pageRequest(query)))))
      .handle("get", ({ params }) => answer(authorize("webhooks:manage")(Webhooks.get(params.webhookId))))
      .handle("update", ({ params, payload }) =>
        guarded(answer(authorize("webhooks:manage")(Webhooks.update(params.webhookId, payload)))))
      .handle("delete", ({ params }) => answer(authorize("webhooks:manage")(Webhooks.remove(params.webhookId))))
      .handle("listDeliveries", ({ params, query }) =>
        answer(authorize("webhooks:manage")(Webhooks.deliveries(params.webhookId, query.status, pageRequest(query)))))
      .handle("retryDelivery", ({ params }) =>
        answer(authorize("webhooks:manage")(Webhooks.retry(params.webhookId, params.deliveryId))))
      .handle("test", ({ params }) => answer(authorize("webhooks:manage")(Webhooks.test(params.webhookId))))
  })
).pipe(Layer.provide(GuardedFetch.layer))
