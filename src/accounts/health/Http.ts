import { Effect } from "effect"
import { HealthApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { Storage } from "../../storage/Database.ts"

const api = areaApi(HealthApi)

export const HealthLive = HttpApiBuilder.group(api, "health", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const health = { status: "ok" as const, storage: storage.backend, migrationVersion: storage.migrationVersion }
    return handlers.handle("check", () => Effect.succeed(health))
  }))
