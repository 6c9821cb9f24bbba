import { Result } from "effect"
import type {
  ContentPart,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  StopReason,
  TokenUsage,
  ToolChoice
} from "../Llm.ts"
import type * as Wire from "./Wire.ts"

/**
 * OpenAI chat completions ↔ the canonical model, both ways: the gateway
 * reads client requests and writes responses and chunks; the `openai`
 * provider writes upstream requests and reads responses and chunks.
 */

type WireMessage = typeof Wire.Message.Type
type WireUserPart = typeof Wire.TextPart.Type | typeof Wire.ImagePart.Type
type WireToolCall = typeof Wire.ToolCall.Type
type WireUsage = typeof Wire.Usage.Type

const dataUrl = /^data:([^;,]+);base64,(.*)$/s

const textOfWire = (content: string | ReadonlyArray<{ readonly text: string }>): string =>
  typeof content === "string" ? content : content.map((part) => part.text).join("\n")

const imageFromUrl = (url: string, detail: "auto" | "low" | "high" | undefined): ContentPart => {
  const inline = dataUrl.exec(url)
  return inline === null
    ? { type: "image", url, detail }
    : { type: "image", mediaType: inline[1], data: inline[2], detail }
}

const userParts = (content: string | ReadonlyArray<WireUserPart>): Array<ContentPart> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : content.map((part): ContentPart =>
      part.type === "text" ? { type: "text", text: part.text } : imageFromUrl(part.image_url.url, part.image_url.detail)
    )

/** A tool call's arguments as a value, or their text when they are not valid JSON. */
const parseArguments = (call: WireToolCall): Result.Result<unknown, string> => {
  if (call.function.arguments.trim() === "") return Result.succeed({})
  try {
    return Result.succeed(JSON.parse(call.function.arguments))
  } catch {
    return Result.fail(call.function.arguments)
  }
}

const toolChoiceFrom = (choice: typeof Wire.ToolChoice.Type | undefined): ToolChoice | undefined => {
  if (choice === undefined) return undefined
  if (typeof choice === "string") return { type: choice }
  return { type: "tool", name: choice.function.name }
}

const messagesFrom = (wire: ReadonlyArray<WireMessage>) => {
  const system: Array<string> = []
  const messages: Array<LlmMessage> = []
  for (const [position, message] of wire.entries()) {
    switch (message.role) {
      case "system":
      case "developer":
        system.push(textOfWire(message.content))
        break
      case "user":
        messages.push({ role: "user", content: userParts(message.content) })
        break
      case "assistant": {
        const content: Array<ContentPart> = []
        const text = message.content === undefined || message.content === null
          ? ""
          : typeof message.content === "string"
          ? message.content
          : message.content.map((part) => (part.type === "text" ? part.text : part.refusal)).join("")
        if (text !== "") content.push({ type: "text", text })
        for (const [index, call] of (message.tool_calls ?? []).entries()) {
          const input = parseArguments(call)
          if (Result.isFailure(input)) {
            return Result.fail(`messages.${position}.tool_calls.${index}.function.arguments is not valid JSON`)
          }
          content.push({ type: "tool_call", id: call.id, name: call.function.name, input: input.success })
        }
        messages.push({ role: "assistant", content })
        break
      }
      case "tool": {
        const result: ContentPart = {
          type: "tool_result",
          toolCallId: message.tool_call_id,
          content: [{ type: "text", text: textOfWire(message.content) }]
        }
        const previous = messages.at(-1)
        // Consecutive tool messages answer one assistant turn: one user turn of results.
        if (previous?.role === "user" && previous.content.every((part) => part.type === "tool_result")) {
          messages[messages.length - 1] = { role: "user", content: [...previous.content, result] }
        } else {
          messages.push({ role: "user", content: [result] })
        }
        break
      }
    }
  }
  return Result.succeed({ system: system.length > 0 ? system.join("\n\n") : undefined, messages })
}

/** A client's chat-completions request as a canonical request, or what it cannot mean. */
export const fromChatRequest = (wire: Wire.ChatCompletionRequest): Result.Result<LlmRequest, string> =>
  Result.map(messagesFrom(wire.messages), ({ system, messages }) => ({
    model: wire.model,
    system,
    messages,
    maxTokens: wire.max_completion_tokens ?? wire.max_tokens ?? undefined,
    temperature: wire.temperature ?? undefined,
    topP: wire.top_p ?? undefined,
    stop: wire.stop === undefined || wire.stop === null ? undefined : typeof wire.stop === "string" ? [wire.stop] : wire.stop,
    tools: wire.tools?.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description,
      inputSchema: tool.function.parameters ?? { type: "object", properties: {} }
    })),
    toolChoice: toolChoiceFrom(wire.tool_choice),
    parallelToolCalls: wire.parallel_tool_calls,
    n: wire.n ?? undefined,
    responseFormat: wire.response_format,
    seed: wire.seed ?? undefined,
    presencePenalty: wire.presence_penalty ?? undefined,
    frequencyPenalty: wire.frequency_penalty ?? undefined,
    user: wire.user
  }))

const textOfParts = (parts: ReadonlyArray<ContentPart>): string =>
  parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

const imageUrl = (part: Extract<ContentPart, { type: "image" }>): string =>
  part.url ?? `data:${part.mediaType ?? "image/png"};base64,${part.data ?? ""}`

const wireToolCalls = (parts: ReadonlyArray<ContentPart>): Array<WireToolCall> =>
  parts.flatMap((part) =>
    part.type === "tool_call"
      ? [{
        id: part.id,
        type: "function" as const,
        function: { name: part.name, arguments: typeof part.input === "string" ? part.input : JSON.stringify(part.input) }
      }]
      : []
  )

const wireUserContent = (parts: ReadonlyArray<ContentPart>): string | Array<WireUserPart> => {
  if (parts.length === 1 && parts[0].type === "text") return parts[0].text
  return parts.flatMap((part): Array<WireUserPart> => {
    if (part.type === "text") return [{ type: "text", text: part.text }]
    if (part.type === "image") {
      return [{ type: "image_url", image_url: { url: imageUrl(part), ...(part.detail ? { detail: part.detail } : {}) } }]
    }
    return []
  })
}

/** One canonical turn as OpenAI messages: tool results become `tool` messages, ahead of the rest of the turn. */
const wireMessages = (message: LlmMessage): Array<WireMessage> => {
  if (message.role === "assistant") {
    const calls = wireToolCalls(message.content)
    const text = textOfParts(message.content)
    return [{
      role: "assistant",
      content: text === "" && calls.length > 0 ? null : text,
      ...(calls.length > 0 ? { tool_calls: calls } : {})
    }]
  }
  const results = message.content.flatMap((part) => (part.type === "tool_result" ? [part] : []))
  // Tool messages carry text only: images a tool returned travel in a user message after them.
  const rest = [
    ...results.flatMap((result) => result.content.filter((part) => part.type === "image")),
    ...message.content.filter((part) => part.type === "text" || part.type === "image")
  ]
  return [
    ...results.map((result): WireMessage => ({
      role: "tool",
      tool_call_id: result.toolCallId,
      content: textOfParts(result.content)
    })),
    ...(rest.length > 0 ? [{ role: "user" as const, content: wireUserContent(rest) }] : [])
  ]
}

const wireToolChoice = (choice: ToolChoice | undefined): typeof Wire.ToolChoice.Type | undefined => {
  if (choice === undefined) return undefined
  return choice.type === "tool" ? { type: "function", function: { name: choice.name } } : choice.type
}

/** The upstream request for a canonical request (`model` is the upstream model name). */
export const toChatRequest = (request: LlmRequest, model: string, stream: boolean): Wire.ChatCompletionRequest => ({
  model,
  messages: [
    ...(request.system === undefined ? [] : [{ role: "system" as const, content: request.system }]),
    ...request.messages.flatMap(wireMessages)
  ],
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
  ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  ...(request.topP === undefined ? {} : { top_p: request.topP }),
  ...(request.n === undefined ? {} : { n: request.n }),
  ...(request.stop === undefined ? {} : { stop: request.stop }),
  ...(request.tools === undefined ? {} : {
    tools: request.tools.map((tool) => ({
      type: "function" as const,
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.inputSchema
      }
    }))
  }),
  ...(request.toolChoice === undefined ? {} : { tool_choice: wireToolChoice(request.toolChoice) }),
  ...(request.parallelToolCalls === undefined ? {} : { parallel_tool_calls: request.parallelToolCalls }),
  ...(request.responseFormat === undefined ? {} : { response_format: request.responseFormat }),
  ...(request.seed === undefined ? {} : { seed: request.seed }),
  ...(request.presencePenalty === undefined ? {} : { presence_penalty: request.presencePenalty }),
  ...(request.frequencyPenalty === undefined ? {} : { frequency_penalty: request.frequencyPenalty }),
  ...(request.user === undefined ? {} : { user: request.user })
})

export const stopReasonFrom = (finishReason: string | null | undefined, calledTools: boolean): StopReason => {
  // Some servers (Ollama among them) answer `stop` for a turn that called tools.
  if (calledTools) return "tool_use"
  switch (finishReason) {
    case "length":
      return "max_tokens"
    case "tool_calls":
    case "function_call":
      return "tool_use"
    case "content_filter":
      return "refusal"
    default:
      return "end_turn"
  }
}

export const finishReasonOf = (stopReason: StopReason): string => {
  switch (stopReason) {
    case "max_tokens":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      return "stop"
  }
}

export const usageFrom = (usage: WireUsage): TokenUsage => ({
  inputTokens: usage.prompt_tokens,
  outputTokens: usage.completion_tokens,
  cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0
})

export const wireUsage = (usage: TokenUsage): WireUsage => ({
  prompt_tokens: usage.inputTokens,
  completion_tokens: usage.outputTokens,
  total_tokens: usage.inputTokens + usage.outputTokens,
  prompt_tokens_details: { cached_tokens: usage.cachedTokens }
})

const choiceFrom = (choice: Wire.ChatCompletion["choices"][number]) => {
  const content: Array<ContentPart> = []
  const text = choice.message.content ?? ""
  if (text !== "") content.push({ type: "text", text })
  if (choice.message.refusal) content.push({ type: "text", text: choice.message.refusal })
  for (const call of choice.message.tool_calls ?? []) {
    // A model may emit broken JSON; the client then gets it verbatim rather than nothing.
    const input = Result.merge(parseArguments(call))
    content.push({ type: "tool_call", id: call.id, name: call.function.name, input })
  }
  const stopReason = choice.message.refusal ? "refusal" : stopReasonFrom(choice.finish_reason, (choice.message.tool_calls ?? []).length > 0)
  return { content, stopReason }
}

/** An upstream completion as a canonical response; usage is zero when the upstream reported none. */
export const fromChatCompletion = (wire: Wire.ChatCompletion, model: string): LlmResponse => {
  const [first, ...others] = [...wire.choices].sort((a, b) => a.index - b.index).map(choiceFrom)
  return {
    id: wire.id,
    model,
    content: first?.content ?? [],
    stopReason: first?.stopReason ?? "end_turn",
    usage: wire.usage ? usageFrom(wire.usage) : { inputTokens: 0, outputTokens: 0, cachedTokens: 0 },
    ...(others.length > 0 ? { alternatives: others } : {})
  }
}

const wireChoice = (index: number, content: ReadonlyArray<ContentPart>, stopReason: StopReason) => {
  const calls = wireToolCalls(content)
  const text = textOfParts(content)
  return {
    index,
    message: {
      role: "assistant" as const,
      content: text === "" && calls.length > 0 ? null : text,
      refusal: null,
      ...(calls.length > 0 ? { tool_calls: calls } : {})
    },
    finish_reason: finishReasonOf(stopReason),
    logprobs: null
  }
}

/** A canonical response as the client's completion. */
export const toChatCompletion = (response: LlmResponse, created: number): Wire.ChatCompletion => ({
  id: response.id,
  object: "chat.completion",
  created,
  model: response.model,
  choices: [
    wireChoice(0, response.content, response.stopReason),
    ...(response.alternatives ?? []).map((alternative, index) => wireChoice(index + 1, alternative.content, alternative.stopReason))
  ],
  usage: wireUsage(response.usage)
})
