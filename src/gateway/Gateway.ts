import { Effect, Option, Sink, Stream } from "effect"
import { CurrentPrincipal, type Principal } from "../auth/Principal.ts"
import { Authorized } from "../auth/Policy.ts"
import { unknownModelMessage } from "../llm/Catalog.ts"
import { Llm, type LlmError, type LlmRequest, type LlmStreamEvent, ModelCatalog, type TokenUsage } from "../llm/Llm.ts"
import { tokenCounter } from "../llm/Tokenizer.ts"
import { BadRequest, InternalError, RateLimited } from "../platform/Errors.ts"
import { Credits, creditsForTokens, type Payer } from "../usage/Credits.ts"

/**
 * The gateway's model calls, billed: credits are checked before any
 * upstream call (403 "Insufficient credits"), and each request writes one
 * usage event under feature `chat` with the token counts the provider
 * reported — for a stream, when it ends, however it ends.
 */

const payerOf = (principal: Principal): Payer => ({
  organizationId: principal.organizationId,
  companyId: principal.companyId,
  userId: principal.userId
})

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

const usageOf = (model: string, usage: TokenUsage) => ({
  feature: "chat",
  model,
  credits: creditsForTokens(usage.inputTokens + usage.outputTokens),
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens
})

/** The paying principal, once it is known to hold credits. */
const fundedPayer = Effect.gen(function*() {
  yield* Authorized("chat:use")
  const payer = payerOf(yield* CurrentPrincipal)
  yield* Credits.use((credits) => credits.ensureAvailable(payer))
  return payer
})

/** Fails with 400 naming the model when the catalog cannot serve it. */
export const requireKnownModel = (model: string) =>
  ModelCatalog.use((catalog) =>
    catalog.resolve(model) === undefined
      ? Effect.fail(new BadRequest({ error: unknownModelMessage(model) }))
      : Effect.void
  )

/**
 * One non-streaming call, billed before the answer is returned. The answer
 * was generated once the pool was known to hold credits, so it is settled:
 * debited up to the balance, never past the limit, and always recorded.
 */
export const complete = (request: LlmRequest) =>
  Effect.gen(function*() {
    const payer = yield* fundedPayer
    const response = yield* Effect.mapError(Llm.use((llm) => llm.generate(request)), toApiError)
    yield* Credits.use((credits) => credits.settle(payer, usageOf(response.model, response.usage)))
    return response
  })

/**
 * What a stream has delivered, for its bill: the provider's usage when it
 * finished, else (a client that left, a provider that failed mid-way) the
 * tokenizer's count of the request and of what was generated. Nothing is
 * billed for a stream the provider never started.
 */
const meter = (payer: Payer, request: LlmRequest) => {
  let model: string | undefined
  let usage: TokenUsage | undefined
  let generated = ""
  const observe = (event: LlmStreamEvent) => {
    switch (event.type) {
      case "start":
        model = event.model
        break
      case "text_delta":
        generated += event.text
        break
      case "tool_call_start":
        generated += event.name
        break
      case "tool_call_delta":
        generated += event.partialJson
        break
      case "finish":
        usage = event.usage
    }
  }
  const bill = (credits: Credits["Service"]) =>
    Effect.gen(function*() {
      if (model === undefined) return
      const spent = usage ?? (yield* Effect.flatMap(tokenCounter, (counter) => counter.estimate(request, generated)))
      yield* credits.settle(payer, usageOf(model, spent))
    })
  return { observe, bill }
}

/**
 * Opens a billed stream. It answers once the provider accepted the request
 * (the `start` event), so refusals still get an HTTP status; the returned
 * stream lives in the request's scope and bills when it ends, including when
 * the client disconnects (the interruption stops the upstream call too).
 */
export const openStream = (request: LlmRequest) =>
  Effect.gen(function*() {
    const payer = yield* fundedPayer
    const llm = yield* Llm
    const credits = yield* Credits
    const { observe, bill } = meter(payer, request)
    const metered = llm.stream(request).pipe(
      Stream.tap((event) => Effect.sync(() => observe(event))),
      Stream.onExit(() => bill(credits))
    )
    const [first, rest] = yield* Effect.mapError(Stream.peel(metered, Sink.head()), toApiError)
    return Option.match(first, { onNone: () => rest, onSome: (event) => Stream.concat(Stream.make(event), rest) })
  })
