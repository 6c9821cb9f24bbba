import { Cause, Context, Effect, Exit, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { AppConfig } from "../platform/AppConfig.ts"

interface ShutdownState {
  /** Requests being answered now. */
  inFlight: number
  /** When the server began to stop, and how many requests it then had to wait for. */
  began: { readonly at: number; readonly inFlight: number } | undefined
}

/**
 * One log line when the server has stopped, saying what it waited for. Three
 * pieces, by where they sit in the server's layers: `layer` is acquired first
 * and released last (after the database closed) and logs the line; `begins`
 * is acquired last and released first (before the listener closes) and marks
 * the start; `counting` counts the requests in flight.
 */
export class ShutdownReport extends Context.Service<ShutdownReport, ShutdownState>()("app/ShutdownReport") {
  static readonly layer = Layer.effect(ShutdownReport, Effect.gen(function*() {
    const { shutdownTimeoutMs } = yield* AppConfig
    const state: ShutdownState = { inFlight: 0, began: undefined }
    yield* Effect.addFinalizer((exit) =>
      Effect.suspend(() => {
        const began = state.began
        if (began === undefined) {
          // A signal before `begins` was acquired (the background workers were starting); a failed start says why itself.
          const signalled = Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
          return signalled ? Effect.logInfo("Stopped while starting: stopped what had started, closed the database") : Effect.void
        }
        return Effect.logInfo(
          `Stopped in ${Date.now() - began.at} ms: waited for ${began.inFlight} in-flight request(s) ` +
            `(at most SHUTDOWN_TIMEOUT_MS ${shutdownTimeoutMs} ms; ${state.inFlight} cut off), ` +
            "stopped the scheduler (a run it interrupted is retried when its lease expires), closed the database"
        )
      })
    )
    return state
  }))

  static readonly begins = Layer.effectDiscard(Effect.gen(function*() {
    const state = yield* ShutdownReport
    yield* Effect.addFinalizer(() => Effect.sync(() => void (state.began = { at: Date.now(), inFlight: state.inFlight })))
  }))

  static readonly counting = HttpRouter.middleware(
    ShutdownReport.useSync((state) => (app) =>
      Effect.suspend(() => {
        state.inFlight += 1
        return Effect.ensuring(app, Effect.sync(() => void (state.inFlight -= 1)))
      })),
    { global: true }
  )
}
