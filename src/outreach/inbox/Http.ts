import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { TrackingSecret } from "../messages/TrackingSecret.ts"
import { InboxApi } from "./Api.ts"
import * as Mailboxes from "./Mailboxes.ts"
import * as Replies from "./Replies.ts"
import * as Threads from "./Threads.ts"

const api = areaApi(InboxApi)

export const InboxLive = HttpApiBuilder.group(api, "inbox", (handlers) =>
  Effect.gen(function*() {
    const box = yield* SecretBox
    const tracking = yield* TrackingSecret
    const sealing = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, SecretBox, box)
    return handlers
      .handle("createMailbox", ({ payload }) => sealing(answer(authorize("campaigns:write")(Mailboxes.create(payload)))))
      .handle("listMailboxes", ({ query }) => answer(authorize("campaigns:read")(Mailboxes.list(query, pageRequest(query)))))
      .handle("getMailbox", ({ params, query }) => answer(authorize("campaigns:read")(Mailboxes.get(params.mailboxId, query))))
      .handle("updateMailbox", ({ params, payload }) => sealing(answer(authorize("campaigns:write")(Mailboxes.update(params.mailboxId, payload)))))
      .handle("deleteMailbox", ({ params, query }) => answer(authorize("campaigns:write")(Mailboxes.remove(params.mailboxId, query))))
      .handle("listThreads", ({ query }) => answer(authorize("campaigns:read")(Threads.list(query))))
      .handle("getThread", ({ params, query }) => answer(authorize("campaigns:read")(Threads.get(params.threadId, query))))
      .handle("updateThread", ({ params, payload }) => answer(authorize("campaigns:write")(Threads.update(params.threadId, payload))))
      .handle("reply", ({ params, payload }) =>
        sealing(answer(authorize("campaigns:write")(Effect.provideService(Replies.reply(params.threadId, payload), TrackingSecret, tracking)))))
      .handle("draft", ({ params, payload }) => answer(authorize("campaigns:write")(Replies.draft(params.threadId, payload))))
  })
).pipe(Layer.provide(Layer.mergeAll(SecretBox.layer, TrackingSecret.layer)))
