import { Effect, Stream } from "effect"
import { type ModelPrice, priceOf } from "../../models/llm/Catalog.ts"
import { unknownModelMessage } from "../../models/llm/Errors.ts"
import {
  type EmbeddingRequest,
  invalidRequest,
  Llm,
  type LlmRequest,
  type LlmResponse,
  type LlmStreamEvent,
  ModelCatalog,
  type TokenUsage
} from "../../models/llm/Llm.ts"
import { tokenCounter } from "../../models/llm/Tokenizer.ts"
import { Credits, type Estimate, type Payer, type Spent } from "./Credits.ts"

/**
 * Model calls billed through `Credits`, for every AI feature: each call
 * holds its worst-case cost — the request's input tokens (the project's
 * tokenizer) plus `maxTokens` (else the model's output cap) per alternative,
 * at the model's prices — and settles to the tokens the provider reported.
 *
 *   const response = yield* BilledLlm.generate(payer, "content", request)
 *
 * Fails with `InsufficientCredits` ("Insufficient credits", no model call) or the
 * call's `LlmError` (an unknown model: `invalid_request`, before any hold).
 */

/** Credits `usage` costs at `price`: whole credits, rounded up; no tokens cost nothing. */
export const creditsFor = (price: ModelPrice, usage: Pick<TokenUsage, "inputTokens" | "outputTokens">): number =>
  Math.ceil((usage.inputTokens * price.inputCreditsPerMillion + usage.outputTokens * price.outputCreditsPerMillion) / 1e6)

/** What a call about to be made is billed by: its hold, its price and its input tokens. */
export interface Quote {
  readonly estimate: Estimate
  readonly price: ModelPrice
  readonly inputTokens: number
  /** The charge for usage the call reported (or that was counted for it). */
  readonly spent: (usage: Pick<TokenUsage, "inputTokens" | "outputTokens">, model?: string) => Spent
}

/** The hold and prices of `request` under `feature`; `invalid_request` when no catalog model serves it. */
export const quote = Effect.fnUntraced(function*(feature: string, request: LlmRequest) {
  const model = (yield* ModelCatalog).resolve(request.model)
  if (model === undefined) return yield* invalidRequest(unknownModelMessage(request.model))
  const price = priceOf(model)
  const inputTokens = yield* (yield* tokenCounter).request(request)
  const outputTokens = (request.maxTokens ?? price.maxOutputTokens) * (request.n ?? 1)
  const result: Quote = {
    estimate: { feature, model: model.id, credits: creditsFor(price, { inputTokens, outputTokens }) },
    price,
    inputTokens,
    spent: (usage, answeredBy) => ({
      credits: creditsFor(price, usage),
      model: answeredBy,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens
    })
  }
  return result
})

/**
 * One billed completion. A call interrupted while the provider works (a
 * client that left) is charged its input tokens; a failed call is released.
 */
export const generate = Effect.fnUntraced(function*(payer: Payer, feature: string, request: LlmRequest) {
  const billing = yield* quote(feature, request)
  const credits = yield* Credits
  return yield* credits.withHold(payer, billing.estimate, (hold) =>
    Llm.use((llm) => llm.generate(request)).pipe(
      Effect.onInterrupt(() => hold.report(billing.spent({ inputTokens: billing.inputTokens, outputTokens: 0 }))),
      Effect.tap((response: LlmResponse) => hold.report(billing.spent(response.usage, response.model)))
    ))
})

/**
 * Texts embedded and billed: the hold is the inputs' tokens (the project's
 * tokenizer) at the model's input price, settled to the tokens the provider
 * reported; embeddings produce no output tokens.
 */
export const embed = Effect.fnUntraced(function*(payer: Payer, feature: string, request: EmbeddingRequest) {
  const model = (yield* ModelCatalog).resolve(request.model)
  if (model === undefined) return yield* invalidRequest(unknownModelMessage(request.model))
  const price = priceOf(model)
  const counter = yield* tokenCounter
  let inputTokens = 0
  for (const text of request.input) inputTokens += yield* counter.text(text)
  const credits = yield* Credits
  return yield* credits.withHold(payer, { feature, model: model.id, credits: creditsFor(price, { inputTokens, outputTokens: 0 }) }, (hold) =>
    Llm.use((llm) => llm.embed(request)).pipe(
      Effect.tap((response) =>
        hold.report({ credits: creditsFor(price, { inputTokens: response.inputTokens, outputTokens: 0 }), model: response.model, inputTokens: response.inputTokens, outputTokens: 0 })
      )
    ))
})

/**
 * One billed stream, quoted now (an unknown model fails here) and held and
 * called when it runs; the stream needs no services. It settles when it
 * ends, however it ends: to the provider's usage when it finished, else (a
 * client that left, a provider failing mid-way) to the tokenizer's count of
 * the request and of what was generated; a stream the provider never
 * started is released.
 */
export const stream = Effect.fnUntraced(function*(payer: Payer, feature: string, request: LlmRequest) {
  const billing = yield* quote(feature, request)
  const credits = yield* Credits
  const llm = yield* Llm
  const counter = yield* tokenCounter
  return credits.stream(payer, billing.estimate, (hold) => {
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
    const report = Effect.suspend(() => {
      if (model === undefined) return Effect.void
      const answeredBy = model
      return Effect.flatMap(
        usage === undefined
          ? Effect.map(counter.text(generated), (outputTokens) => ({ inputTokens: billing.inputTokens, outputTokens }))
          : Effect.succeed(usage),
        (spent) => hold.report(billing.spent(spent, answeredBy))
      )
    })
    return llm.stream(request).pipe(
      // A chunk at a time (`tap` would split the stream into a chunk per event).
      Stream.mapArray((events) => {
        for (const event of events) observe(event)
        return events
      }),
      Stream.onExit(() => report)
    )
  })
})

/** The rounds of an agent (src/models/llm/Agent.ts), each one billed stream under `feature`. */
export const rounds = (payer: Payer, feature: string) => (request: LlmRequest) => Stream.unwrap(stream(payer, feature, request))
