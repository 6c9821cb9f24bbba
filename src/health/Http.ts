import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../app/Api.ts"
import { Storage } from "../storage/Database.ts"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const health = { status: "ok" as const, storage: storage.backend, migrationVersion: storage.migrationVersion }
    return handlers.handle("check", () => Effect.succeed(health))
  }))
