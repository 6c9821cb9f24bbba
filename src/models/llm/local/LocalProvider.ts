import { Effect, Stream } from "effect"
import { newId } from "../../../platform/Ids.ts"
import {
  type CatalogModel,
  type ContentPart,
  type LlmRequest,
  type LlmResponse,
  type LlmStreamEvent,
  type StopReason,
  type ToolDefinition
} from "../Llm.ts"
import { type Provider, withoutOpenAiOnlyFeatures } from "../Provider.ts"
import { type TokenCounter, tokenCounter } from "../Tokenizer.ts"
import { answerFromResults, recogniseAgentCall } from "./AgentSkills.ts"
import { recogniseInstruction } from "./Instructions.ts"
import { localEmbed } from "./LocalEmbedding.ts"

/**
 * The offline `local` provider: a deterministic demo and test model, so
 * that every feature runs on a machine without any model provider. It does
 * not understand language. It answers with a fixed sentence quoting the last
 * user text; calls a tool when one is offered and the prompt names it (or
 * `toolChoice` demands one), with arguments filled from the tool's JSON
 * Schema, or when the prompt is a simple editing instruction
 * (`Instructions.ts`), or an agent's request (`AgentSkills.ts`: remember,
 * recall, else search the knowledge base); and after a tool result, answers
 * from an agent tool's result (cited passages, memories) or reports what the tool returned. It honours
 * `maxTokens` and stop sequences, counts usage with the real tokenizer and
 * streams its answer word by word.
 */

const textOfParts = (parts: ReadonlyArray<ContentPart>): string =>
  parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ")

const lastMessage = (request: LlmRequest) => request.messages.at(-1)

/** A value matching a JSON Schema, deterministic: strings take `text`. */
const sampleOf = (schema: unknown, text: string): unknown => {
  if (typeof schema !== "object" || schema === null) return text
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if ("const" in s) return s.const
  if (s.default !== undefined) return s.default
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type
  switch (type) {
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 1
    case "boolean":
      return true
    case "array":
      return [sampleOf(s.items, text)]
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>
      const required = Array.isArray(s.required) ? (s.required as Array<string>) : Object.keys(properties)
      return Object.fromEntries(required.map((name) => [name, sampleOf(properties[name], text)]))
    }
    default:
      return text
  }
}

/** The tool to call, if any: the one `toolChoice` names, else one the prompt mentions, else the first when one is required. */
const toolToCall = (request: LlmRequest, prompt: string): ToolDefinition | undefined => {
  const tools = request.tools ?? []
  const choice = request.toolChoice ?? { type: "auto" }
  if (tools.length === 0 || choice.type === "none") return undefined
  if (choice.type === "tool") return tools.find((tool) => tool.name === choice.name)
  const mentioned = tools.find((tool) => prompt.toLowerCase().includes(tool.name.toLowerCase()))
  return mentioned ?? (choice.type === "required" ? tools[0] : undefined)
}

const replyText = (request: LlmRequest, model: CatalogModel): string => {
  const last = lastMessage(request)
  const results = last?.content.flatMap((part) => (part.type === "tool_result" ? [part] : [])) ?? []
  if (results.length > 0) {
    const calls = request.messages.flatMap((message) => message.content).flatMap((part) => (part.type === "tool_call" ? [part] : []))
    const read = results.map((result) => ({
      name: calls.find((call) => call.id === result.toolCallId)?.name ?? "the tool",
      text: textOfParts(result.content),
      isError: result.isError === true
    }))
    const question = request.messages.findLast((message) => message.role === "user" && message.content.some((part) => part.type === "text"))
    return answerFromResults(question === undefined ? "" : textOfParts(question.content), read) ??
      read.map((result) => `${result.isError ? `${result.name} failed` : `${result.name} returned`}: ${result.text}`).join("\n")
  }
  const said = last === undefined ? "" : textOfParts(last.content)
  return `This is ${model.id}, the offline demo model. You said: "${said}"`
}

/** Cuts `text` at the first stop sequence and at `maxTokens` tokens (whole words). */
const bounded = (text: string, request: LlmRequest, counter: TokenCounter) =>
  Effect.gen(function*() {
    let output = text
    let stopReason: StopReason = "end_turn"
    let stopSequence: string | undefined
    for (const stop of request.stop ?? []) {
      const at = stop === "" ? -1 : output.indexOf(stop)
      if (at >= 0) {
        output = output.slice(0, at)
        stopReason = "stop_sequence"
        stopSequence = stop
      }
    }
    if (request.maxTokens !== undefined && (yield* counter.text(output)) > request.maxTokens) {
      output = yield* counter.wordsWithin(output, request.maxTokens)
      stopReason = "max_tokens"
      stopSequence = undefined
    }
    return { output, stopReason, stopSequence }
  })

const answer = (request: LlmRequest, model: CatalogModel, counter: TokenCounter) =>
  Effect.gen(function*() {
    const last = lastMessage(request)
    const prompt = last?.role === "user" ? textOfParts(last.content) : ""
    const afterToolResult = last?.content.some((part) => part.type === "tool_result") ?? false
    const recognised = afterToolResult
      ? undefined
      : recogniseInstruction(prompt, request.tools ?? []) ?? recogniseAgentCall(prompt, request.tools ?? [])
    const tool = afterToolResult ? undefined : recognised?.tool ?? toolToCall(request, prompt)
    const inputTokens = yield* counter.request(request)
    if (tool !== undefined) {
      const input = recognised?.input ?? sampleOf({ type: "object", ...tool.inputSchema }, prompt)
      const call: ContentPart = { type: "tool_call", id: newId("call"), name: tool.name, input }
      const outputTokens = (yield* counter.text(tool.name)) + (yield* counter.text(JSON.stringify(input)))
      return {
        id: newId("msg"),
        model: model.id,
        content: [call],
        stopReason: "tool_use",
        usage: { inputTokens, outputTokens, cachedTokens: 0 }
      } satisfies LlmResponse
    }
    const { output, stopReason, stopSequence } = yield* bounded(replyText(request, model), request, counter)
    return {
      id: newId("msg"),
      model: model.id,
      content: [{ type: "text", text: output }],
      stopReason,
      stopSequence,
      usage: { inputTokens, outputTokens: yield* counter.text(output), cachedTokens: 0 }
    } satisfies LlmResponse
  })

/** The stream events that deliver `response`: text word by word, tool input in two pieces. */
export const responseEvents = (response: LlmResponse): Array<LlmStreamEvent> => {
  const events: Array<LlmStreamEvent> = [{ type: "start", model: response.model, inputTokens: response.usage.inputTokens }]
  response.content.forEach((part, index) => {
    if (part.type === "text") {
      for (const word of part.text.split(/(?<=\s)/)) {
        if (word !== "") events.push({ type: "text_delta", index, text: word })
      }
    } else if (part.type === "tool_call") {
      const json = JSON.stringify(part.input)
      const half = Math.ceil(json.length / 2)
      events.push(
        { type: "tool_call_start", index, id: part.id, name: part.name },
        { type: "tool_call_delta", index, partialJson: json.slice(0, half) },
        { type: "tool_call_delta", index, partialJson: json.slice(half) }
      )
    }
  })
  events.push({ type: "finish", stopReason: response.stopReason, stopSequence: response.stopSequence, usage: response.usage })
  return events
}

export const LocalProvider: Provider = {
  embed: localEmbed,
  generate: (request, model) =>
    Effect.andThen(
      withoutOpenAiOnlyFeatures(request, model),
      Effect.flatMap(tokenCounter, (counter) => answer(request, model, counter))
    ),
  stream: (request, model) =>
    Stream.fromIterableEffect(
      Effect.andThen(
        withoutOpenAiOnlyFeatures(request, model),
        Effect.map(Effect.flatMap(tokenCounter, (counter) => answer(request, model, counter)), responseEvents)
      )
    )
}
