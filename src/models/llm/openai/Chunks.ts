import { Effect } from "effect"
import type { LlmStreamEvent, TokenUsage } from "../Llm.ts"
import { finishReasonOf, stopReasonFrom, usageFrom, wireUsage } from "./Translate.ts"
import type * as Wire from "./Wire.ts"

/**
 * OpenAI's streamed chat-completion chunks ↔ canonical stream events: the
 * gateway encodes chunks for its clients, the `openai` provider decodes the
 * upstream's.
 */

/**
 * Canonical stream events → the client's chunks. Stateful: tool calls are
 * numbered per choice, in the order they start.
 */
export const chunkEncoder = (options: {
  readonly id: string
  readonly created: number
  readonly choices: number
  readonly includeUsage: boolean
}) => {
  let model = ""
  const toolOrdinals = new Map<string, number>()
  const toolCounts: Array<number> = []
  const chunk = (
    choices: Wire.ChatCompletionChunk["choices"],
    usage: typeof Wire.Usage.Type | null = null
  ): Wire.ChatCompletionChunk => ({
    id: options.id,
    object: "chat.completion.chunk",
    created: options.created,
    model,
    choices,
    ...(options.includeUsage ? { usage } : {})
  })
  const delta = (choice: number, value: Wire.ChatCompletionChunk["choices"][number]["delta"]) =>
    chunk([{ index: choice, delta: value, finish_reason: null }])
  return (event: LlmStreamEvent): Array<Wire.ChatCompletionChunk> => {
    switch (event.type) {
      case "start":
        model = event.model
        return Array.from({ length: options.choices }, (_, choice) => delta(choice, { role: "assistant", content: "" }))
      case "text_delta":
        return [delta(event.choice ?? 0, { content: event.text })]
      case "tool_call_start": {
        const choice = event.choice ?? 0
        const ordinal = toolCounts[choice] ?? 0
        toolCounts[choice] = ordinal + 1
        toolOrdinals.set(`${choice}:${event.index}`, ordinal)
        return [delta(choice, {
          tool_calls: [{ index: ordinal, id: event.id, type: "function", function: { name: event.name, arguments: "" } }]
        })]
      }
      case "tool_call_delta": {
        const choice = event.choice ?? 0
        const ordinal = toolOrdinals.get(`${choice}:${event.index}`) ?? 0
        return [delta(choice, { tool_calls: [{ index: ordinal, function: { arguments: event.partialJson } }] })]
      }
      case "finish":
        return [
          ...[event.stopReason, ...(event.alternativeStopReasons ?? [])].map((stopReason, choice) =>
            chunk([{ index: choice, delta: {}, finish_reason: finishReasonOf(stopReason) }])
          ),
          ...(options.includeUsage ? [chunk([], wireUsage(event.usage))] : [])
        ]
    }
  }
}

/**
 * An upstream's chunks → canonical stream events. Stateful: assigns block
 * indices per choice (text, then each tool call as it starts) and keeps the
 * finish reasons and usage for `finish`.
 */
export const chunkDecoder = () => {
  interface ChoiceState {
    nextBlock: number
    textBlock: number | undefined
    readonly tools: Map<number, number>
    finishReason: string | undefined
  }
  const states: Array<ChoiceState> = []
  let usage: TokenUsage | undefined
  /** Everything generated, for estimating usage when the upstream reports none. */
  let generated = ""
  const stateOf = (choice: number) =>
    (states[choice] ??= { nextBlock: 0, textBlock: undefined, tools: new Map(), finishReason: undefined })
  const withChoice = (choice: number) => (choice === 0 ? {} : { choice })
  return {
    decode: (chunk: Wire.ChatCompletionChunk): Array<LlmStreamEvent> => {
      const events: Array<LlmStreamEvent> = []
      for (const choice of chunk.choices) {
        const state = stateOf(choice.index)
        const text = (choice.delta.content ?? "") + (choice.delta.refusal ?? "")
        if (text !== "") {
          state.textBlock ??= state.nextBlock++
          generated += text
          events.push({ type: "text_delta", index: state.textBlock, text, ...withChoice(choice.index) })
        }
        for (const call of choice.delta.tool_calls ?? []) {
          let block = state.tools.get(call.index)
          if (block === undefined) {
            block = state.nextBlock++
            state.tools.set(call.index, block)
            state.textBlock = undefined
            const name = call.function?.name ?? ""
            generated += name
            events.push({
              type: "tool_call_start",
              index: block,
              id: call.id ?? `call_${choice.index}_${call.index}`,
              name,
              ...withChoice(choice.index)
            })
          }
          const partialJson = call.function?.arguments ?? ""
          if (partialJson !== "") {
            generated += partialJson
            events.push({ type: "tool_call_delta", index: block, partialJson, ...withChoice(choice.index) })
          }
        }
        if (choice.finish_reason) state.finishReason = choice.finish_reason
      }
      if (chunk.usage) usage = usageFrom(chunk.usage)
      return events
    },
    /** The closing event; `estimate` supplies usage when the upstream reported none. */
    finish: (estimate: (generated: string) => Effect.Effect<TokenUsage>): Effect.Effect<LlmStreamEvent> => {
      const [first, ...others] = states.length > 0 ? states : [stateOf(0)]
      const stopOf = (state: ChoiceState) => stopReasonFrom(state.finishReason, state.tools.size > 0)
      return Effect.map(usage === undefined ? estimate(generated) : Effect.succeed(usage), (spent) => ({
        type: "finish" as const,
        stopReason: stopOf(first),
        usage: spent,
        ...(others.length > 0 ? { alternativeStopReasons: others.map(stopOf) } : {})
      }))
    }
  }
}
