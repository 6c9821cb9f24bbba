import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import { authorize } from "../auth/Policy.ts"
import * as Content from "./Content.ts"

export const ContentLive = HttpApiBuilder.group(Api, "content", (handlers) =>
  handlers
    .handle("spamCheck", ({ payload }) => authorize("content:use")(Content.spamCheck(payload)))
    .handle("spintax", ({ payload }) => authorize("content:use")(Content.spintax(payload))))
