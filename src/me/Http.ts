import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal, toMe } from "../auth/Principal.ts"
import { Api } from "../app/Api.ts"

export const MeLive = HttpApiBuilder.group(Api, "me", (handlers) =>
  handlers.handle("get", () => CurrentPrincipal.useSync(toMe)))
