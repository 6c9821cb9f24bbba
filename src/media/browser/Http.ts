import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { BrowserApi } from "./Api.ts"
import * as Browser from "./Browser.ts"

const api = areaApi(BrowserApi)

export const BrowserLive = HttpApiBuilder.group(api, "browser", (handlers) =>
  handlers.handle("extract", ({ payload }) => answer(authorize("content:use")(Browser.extract(payload)))))
