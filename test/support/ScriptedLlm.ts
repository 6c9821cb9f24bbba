import { Context, Effect, Layer, Ref, Stream } from "effect"
import { Llm, LlmError, type LlmRequest, type StopReason, type TokenUsage } from "../../src/models/llm/Llm.ts"
import { responseEvents } from "../../src/models/llm/local/LocalProvider.ts"

/**
 * A deterministic in-memory `Llm` for tests: answers `generate` (and
 * `stream`, the same answer as stream events) from a script (text, usage,
 * stop reason, or a failure) and records every request.
 */
export interface Script {
  /** The answer to the `call`-th request (0-based): its text, a failure, or undefined for `Done: <prompt>`. */
  readonly reply?: (request: LlmRequest, call: number) => string | LlmError | undefined
  readonly usage?: Omit<TokenUsage, "cachedTokens">
  readonly stopReason?: StopReason
}

export const scriptedUsage = { inputTokens: 1_500, outputTokens: 500 }

/** The requests the scripted `Llm` received, in order. */
export class LlmCalls extends Context.Service<LlmCalls, {
  readonly requests: Effect.Effect<ReadonlyArray<LlmRequest>>
}>()("test/LlmCalls") {}

const promptText = (request: LlmRequest) =>
  request.messages.flatMap((message) => message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])))
    .join("\n")

export const scriptedLlm = (script: Script = {}) =>
  Layer.effectContext(Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<LlmRequest>>([])
    const generate = (request: LlmRequest) =>
        Effect.gen(function*() {
          const call = (yield* Ref.getAndUpdate(requests, (all) => [...all, request])).length
          const reply = script.reply?.(request, call) ?? `Done: ${promptText(request)}`
          if (reply instanceof LlmError) return yield* reply
          return {
            id: `scripted-${call}`,
            model: request.model,
            content: [{ type: "text" as const, text: reply }],
            stopReason: script.stopReason ?? "end_turn",
            usage: { ...(script.usage ?? scriptedUsage), cachedTokens: 0 }
          }
        })
    const llm = Llm.of({
      generate,
      stream: (request) => Stream.fromIterableEffect(Effect.map(generate(request), responseEvents)),
      embed: () => Effect.fail(new LlmError({ kind: "invalid_request", message: "The scripted Llm answers generate only" }))
    })
    return Context.make(Llm, llm).pipe(Context.add(LlmCalls, { requests: Ref.get(requests) }))
  }))
