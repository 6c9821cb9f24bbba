import { Effect, Stream } from "effect"
import { CurrentPrincipal } from "../../auth/Principal.ts"
import { Authorized } from "../../auth/Policy.ts"
import { type EmbeddingRequest, LlmError, type LlmRequest } from "../llm/Llm.ts"
import { BadRequest, InternalError, RateLimited } from "../../platform/Errors.ts"
import { started } from "../../platform/Streams.ts"
import * as BilledLlm from "../../accounts/usage/BilledLlm.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"

/**
 * The gateway's model calls, billed through `BilledLlm`: the worst-case
 * cost is held before any upstream call (403 "Insufficient credits"), and
 * each request settles to one usage event under feature `chat` with the
 * token counts the provider reported — for a stream, when it ends, however
 * it ends.
 */

/** A model failure as the API's error: the client's fault 400, provider load 429, provider failure 500. */
export const toApiError = (error: LlmError) => {
  switch (error.kind) {
    case "invalid_request":
      return new BadRequest({ error: error.message })
    case "rate_limited":
      return new RateLimited({ error: error.message })
    case "upstream":
      return new InternalError({ error: `Model provider failed: ${error.message}` })
  }
}

/** The paying principal, once it may chat. */
const payer = Effect.gen(function*() {
  yield* Authorized("chat:use")
  return payerOf(yield* CurrentPrincipal)
})

const apiErrorOf = <E>(error: LlmError | E) => (error instanceof LlmError ? toApiError(error) : error)

/** One non-streaming call, billed under feature `chat` (`BilledLlm.generate`). */
export const complete = (request: LlmRequest) =>
  Effect.flatMap(payer, (paying) => Effect.mapError(BilledLlm.generate(paying, "chat", request), apiErrorOf))

/** Texts embedded, billed under feature `chat` (`BilledLlm.embed`). */
export const embed = (request: EmbeddingRequest) =>
  Effect.flatMap(payer, (paying) => Effect.mapError(BilledLlm.embed(paying, "chat", request), apiErrorOf))

/**
 * Opens a billed stream (`BilledLlm.stream`, feature `chat`). It answers
 * once the credits are held and the provider accepted the request (the
 * `start` event), so refusals still get an HTTP status; the returned stream
 * lives in the request's scope and settles when it ends, including when the
 * client disconnects (the interruption stops the upstream call too).
 */
export const openStream = Effect.fnUntraced(function*(request: LlmRequest) {
  const billed = yield* Effect.mapError(BilledLlm.stream(yield* payer, "chat", request), toApiError)
  const events = yield* Effect.mapError(started(billed), apiErrorOf)
  // Credits are held before the first event, so later failures are the model's, reported in-band.
  return Stream.mapError(events, (error) =>
    error instanceof LlmError ? error : new LlmError({ kind: "invalid_request", message: error.message }))
})
