import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Layer } from "effect"
import { JsonLogger, ServerLive } from "./app/Server.ts"
import { AppConfig } from "./platform/AppConfig.ts"

/** A start-up failure is one clear line and a non-zero exit, not a stack trace. */
const reportStartFailure = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  const message = error instanceof Error ? error.message : String(error)
  return Effect.andThen(Console.error(`platform-api: cannot start: ${message.split("\n")[0]}`), Effect.failCause(cause))
}

Layer.launch(ServerLive).pipe(
  Effect.provide(JsonLogger),
  Effect.provide(AppConfig.layer),
  Effect.tapCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : reportStartFailure(cause)),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
