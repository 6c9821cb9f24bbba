import { HttpApiBuilder } from "effect/http-api"
import { authorize } from "../../auth/Policy.ts"
import { areaApi } from "../../http/Area.ts"
import { answer } from "../../http/Refusals.ts"
import { BrandKitApi } from "./Api.ts"
import * as BrandKit from "./BrandKit.ts"

const api = areaApi(BrandKitApi)

export const BrandKitLive = HttpApiBuilder.group(api, "brandKit", (handlers) =>
  handlers
    .handle("get", ({ query }) => answer(authorize("brandKit:read")(BrandKit.get(query.companyId))))
    .handle("put", ({ payload }) => answer(authorize("brandKit:write")(BrandKit.put(payload)))))
