import { HttpApiBuilder } from "effect/http-api"
import { MeApi } from "./Api.ts"
import { CurrentPrincipal, toMe } from "../../auth/Principal.ts"
import { areaApi } from "../../http/Area.ts"

const api = areaApi(MeApi)

export const MeLive = HttpApiBuilder.group(api, "me", (handlers) =>
  handlers.handle("get", () => CurrentPrincipal.useSync(toMe)))
