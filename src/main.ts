import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Layer } from "effect"
import { JsonLogger, ServerLive } from "./app/Server.ts"
import { ProvidersLogged } from "./app/StartupLog.ts"
import { SettingsLive } from "./app/Settings.ts"

/** Why a listen failed, in words, for the errors an operator can fix. */
const listenProblems: Record<string, string> = {
  EADDRINUSE: "is already in use (EADDRINUSE): stop the process using it or set PORT",
  EACCES: "needs privileges this process lacks (EACCES): choose a PORT above 1023",
  EADDRNOTAVAIL: "is not an address of this machine (EADDRNOTAVAIL): set HOST to one of its addresses"
}

interface SystemError {
  readonly code?: string
  readonly syscall?: string
  readonly address?: string
  readonly port?: number
}

/** The first line of the innermost message an error carries (a server's error wraps Node's in `cause`). */
const describe = (error: unknown): string => {
  const system = error as SystemError
  if (system.syscall === "listen" && system.code !== undefined && system.address !== undefined) {
    const where = `${system.address}:${system.port}`
    return `${where} ${listenProblems[system.code] ?? `cannot be listened on (${system.code})`}`
  }
  const message = error instanceof Error ? error.message.split("\n")[0]!.trim() : String(error)
  const cause = error instanceof Error ? error.cause : undefined
  if (cause !== undefined && cause !== null && (message === "" || (cause as SystemError).syscall === "listen")) {
    return describe(cause)
  }
  return message === "" && error instanceof Error ? error.name : message
}

/** A start-up failure is one clear line and a non-zero exit, not a stack trace. */
const reportStartFailure = (cause: Cause.Cause<unknown>) =>
  Effect.andThen(Console.error(`platform-api: cannot start: ${describe(Cause.squash(cause))}`), Effect.failCause(cause))

// Where e-mail, model calls and the other providers' work go is logged once the server is up.
Layer.launch(Layer.provideMerge(ProvidersLogged, ServerLive)).pipe(
  Effect.provide(JsonLogger),
  Effect.provide(SettingsLive),
  Effect.tapCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : reportStartFailure(cause)),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
