import { Result } from "effect"
import type {
  ContentPart,
  LlmMessage,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  StopReason,
  TokenUsage,
  ToolChoice,
  ToolDefinition
} from "../Llm.ts"
import * as Wire from "./Wire.ts"

/**
 * Anthropic Messages ↔ the canonical model, both ways: the gateway reads
 * client requests and writes messages and events; the `anthropic` provider
 * writes upstream requests and reads messages and events. Thinking, server
 * tools and prompt-caching directives are dropped on the way in.
 */

type Block = Wire.ContentBlock
type ImageBlock = typeof Wire.ImageBlock.Type
type TextBlock = typeof Wire.TextBlock.Type

/** Output tokens asked of an Anthropic upstream when the request set no limit (the field is required there). */
export const defaultMaxTokens = 4096

const image = (block: ImageBlock): ContentPart =>
  block.source.type === "base64"
    ? { type: "image", mediaType: block.source.media_type, data: block.source.data }
    : { type: "image", url: block.source.url }

const simpleParts = (content: string | ReadonlyArray<{ readonly type: string }>): Array<ContentPart> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : content.flatMap((block): Array<ContentPart> => {
      if (block.type === "text") return [{ type: "text", text: (block as TextBlock).text }]
      if (block.type === "image") return [image(block as ImageBlock)]
      return []
    })

const partsFrom = (blocks: string | ReadonlyArray<Block>, where: string): Result.Result<Array<ContentPart>, string> => {
  if (typeof blocks === "string") return Result.succeed([{ type: "text", text: blocks }])
  const parts: Array<ContentPart> = []
  for (const [index, block] of blocks.entries()) {
    if (!Wire.isTranslated(block)) continue
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text })
        break
      case "image":
        parts.push(image(block))
        break
      case "tool_use":
        parts.push({ type: "tool_call", id: block.id, name: block.name, input: block.input })
        break
      case "tool_result":
        parts.push({
          type: "tool_result",
          toolCallId: block.tool_use_id,
          content: simpleParts(block.content ?? ""),
          ...(block.is_error === undefined ? {} : { isError: block.is_error })
        })
        break
      case "document": {
        const source = block.source
        if (source.type === "text") parts.push({ type: "text", text: source.data })
        else if (source.type === "content") parts.push(...simpleParts(source.content))
        else return Result.fail(`${where}.${index}: ${source.type} documents (PDF) are not supported; send the text`)
        break
      }
    }
  }
  return Result.succeed(parts)
}

const systemText = (system: MessagesLike["system"]): string | undefined =>
  system === undefined ? undefined : typeof system === "string" ? system : system.map((block) => block.text).join("\n\n")

const toolsFrom = (tools: MessagesLike["tools"]): Array<ToolDefinition> | undefined =>
  tools?.flatMap((tool) =>
    "input_schema" in tool ? [{ name: tool.name, description: tool.description, inputSchema: tool.input_schema }] : []
  )

const toolChoiceFrom = (choice: typeof Wire.ToolChoice.Type): ToolChoice => {
  switch (choice.type) {
    case "any":
      return { type: "required" }
    case "tool":
      return { type: "tool", name: choice.name }
    default:
      return { type: choice.type }
  }
}

type MessagesLike = typeof Wire.CountTokensRequest.Type & Partial<Wire.MessagesRequest>

/** A client's Messages (or count_tokens) request as a canonical request, or what it cannot mean. */
export const fromMessagesRequest = (wire: MessagesLike): Result.Result<LlmRequest, string> => {
  const messages: Array<LlmMessage> = []
  for (const [index, message] of wire.messages.entries()) {
    const parts = partsFrom(message.content, `messages.${index}.content`)
    if (Result.isFailure(parts)) return Result.fail(parts.failure)
    messages.push({ role: message.role, content: parts.success })
  }
  const tools = toolsFrom(wire.tools)
  const forwarded = tools !== undefined && tools.length > 0
  return Result.succeed({
    model: wire.model,
    system: systemText(wire.system),
    messages,
    maxTokens: wire.max_tokens,
    temperature: wire.temperature,
    topP: wire.top_p,
    topK: wire.top_k,
    stop: wire.stop_sequences,
    tools: forwarded ? tools : undefined,
    toolChoice: forwarded && wire.tool_choice !== undefined ? toolChoiceFrom(wire.tool_choice) : undefined,
    parallelToolCalls: wire.tool_choice?.disable_parallel_tool_use === true ? false : undefined,
    user: wire.metadata?.user_id ?? undefined
  })
}

const wireImage = (part: Extract<ContentPart, { type: "image" }>): ImageBlock =>
  part.data !== undefined
    ? { type: "image", source: { type: "base64", media_type: part.mediaType ?? "image/png", data: part.data } }
    : { type: "image", source: { type: "url", url: part.url ?? "" } }

/** Tool input is a JSON object on this wire; anything else (a model's broken JSON) becomes an empty one. */
const objectInput = (input: unknown) => (typeof input === "object" && input !== null && !Array.isArray(input) ? input : {})

const wireBlocks = (parts: ReadonlyArray<ContentPart>): Array<Block> =>
  parts.flatMap((part): Array<Block> => {
    switch (part.type) {
      case "text":
        // The API refuses empty text blocks.
        return part.text === "" ? [] : [{ type: "text", text: part.text }]
      case "image":
        return [wireImage(part)]
      case "tool_call":
        return [{ type: "tool_use", id: part.id, name: part.name, input: objectInput(part.input) }]
      case "tool_result":
        return [{
          type: "tool_result",
          tool_use_id: part.toolCallId,
          content: wireBlocks(part.content).filter((block) => block.type === "text" || block.type === "image"),
          ...(part.isError === undefined ? {} : { is_error: part.isError })
        }]
    }
  })

const wireToolChoice = (choice: ToolChoice | undefined, parallel: boolean | undefined) => {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) return parallel === false ? { tool_choice: { type: "auto" as const, ...disable } } : {}
  switch (choice.type) {
    case "required":
      return { tool_choice: { type: "any" as const, ...disable } }
    case "tool":
      return { tool_choice: { type: "tool" as const, name: choice.name, ...disable } }
    default:
      return { tool_choice: { type: choice.type, ...disable } }
  }
}

/** The upstream request for a canonical request (`model` is the upstream model name). */
export const toMessagesRequest = (request: LlmRequest, model: string, stream: boolean): Wire.MessagesRequest => ({
  model,
  max_tokens: request.maxTokens ?? defaultMaxTokens,
  messages: request.messages
    .map((message) => ({ role: message.role, content: wireBlocks(message.content) }))
    .filter((message) => message.content.length > 0),
  ...(request.system === undefined ? {} : { system: request.system }),
  ...(stream ? { stream: true } : {}),
  ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  ...(request.topP === undefined ? {} : { top_p: request.topP }),
  ...(request.topK === undefined ? {} : { top_k: request.topK }),
  ...(request.stop === undefined ? {} : { stop_sequences: request.stop }),
  ...(request.tools === undefined ? {} : {
    tools: request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      input_schema: tool.inputSchema
    }))
  }),
  ...(request.tools === undefined ? {} : wireToolChoice(request.toolChoice, request.parallelToolCalls)),
  ...(request.user === undefined ? {} : { metadata: { user_id: request.user } })
})

export const stopReasonFrom = (stopReason: string | null | undefined): StopReason => {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens"
    case "stop_sequence":
      return "stop_sequence"
    case "tool_use":
      return "tool_use"
    case "refusal":
      return "refusal"
    default:
      return "end_turn"
  }
}

/** Canonical input counts cached tokens; Anthropic's `input_tokens` counts only the rest. */
export const usageFrom = (usage: Omit<Wire.Usage, "input_tokens"> & { readonly input_tokens?: number | null | undefined }): TokenUsage => {
  const cached = usage.cache_read_input_tokens ?? 0
  return {
    inputTokens: (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0),
    outputTokens: usage.output_tokens,
    cachedTokens: cached
  }
}

export const wireUsage = (usage: TokenUsage): Wire.Usage => ({
  input_tokens: usage.inputTokens - usage.cachedTokens,
  output_tokens: usage.outputTokens,
  cache_read_input_tokens: usage.cachedTokens,
  cache_creation_input_tokens: 0
})

/** An upstream message as a canonical response. */
export const fromMessage = (wire: Wire.MessageResponse, model: string): LlmResponse => ({
  id: wire.id,
  model,
  content: wire.content.flatMap((block): Array<ContentPart> => {
    if (block.type === "text") return [{ type: "text", text: (block as TextBlock).text }]
    if (block.type === "tool_use") {
      const call = block as typeof Wire.ToolUseBlock.Type
      return [{ type: "tool_call", id: call.id, name: call.name, input: call.input }]
    }
    return []
  }),
  stopReason: stopReasonFrom(wire.stop_reason),
  stopSequence: wire.stop_sequence ?? undefined,
  usage: usageFrom(wire.usage)
})

/** A canonical response as the client's message. */
export const toMessage = (response: LlmResponse): Wire.MessageResponse => ({
  id: response.id,
  type: "message",
  role: "assistant",
  model: response.model,
  content: response.content.flatMap((part): Array<Wire.MessageResponse["content"][number]> => {
    if (part.type === "text") return [{ type: "text", text: part.text }]
    if (part.type === "tool_call") return [{ type: "tool_use", id: part.id, name: part.name, input: objectInput(part.input) }]
    return []
  }),
  stop_reason: response.stopReason,
  stop_sequence: response.stopSequence ?? null,
  usage: wireUsage(response.usage)
})

/** One server-sent event of the client's stream. */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

const sse = (event: string, data: Record<string, unknown>): SseEvent => ({ event, data: { type: event, ...data } })

export const ping: SseEvent = sse("ping", {})

/**
 * Canonical stream events → the client's event sequence: `message_start`
 * and a first `ping`, then per block `content_block_start`, its deltas and `content_block_stop`,
 * then `message_delta` with the stop reason and usage, and `message_stop`.
 * Stateful: a block closes when the next one starts. Only choice 0 exists here.
 */
export const eventEncoder = (id: string) => {
  let open: number | undefined
  const close = (): Array<SseEvent> => {
    if (open === undefined) return []
    const stop = sse("content_block_stop", { index: open })
    open = undefined
    return [stop]
  }
  const begin = (index: number, block: Record<string, unknown>): Array<SseEvent> => {
    if (open === index) return []
    const closing = close()
    open = index
    return [...closing, sse("content_block_start", { index, content_block: block })]
  }
  return (event: LlmStreamEvent): Array<SseEvent> => {
    if ("choice" in event && (event.choice ?? 0) !== 0) return []
    switch (event.type) {
      case "start":
        return [sse("message_start", {
          message: {
            id,
            type: "message",
            role: "assistant",
            model: event.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: event.inputTokens ?? 0, output_tokens: 0 }
          }
        }), ping]
      case "text_delta":
        return [
          ...begin(event.index, { type: "text", text: "" }),
          sse("content_block_delta", { index: event.index, delta: { type: "text_delta", text: event.text } })
        ]
      case "tool_call_start":
        return begin(event.index, { type: "tool_use", id: event.id, name: event.name, input: {} })
      case "tool_call_delta":
        return [sse("content_block_delta", { index: event.index, delta: { type: "input_json_delta", partial_json: event.partialJson } })]
      case "finish":
        return [
          ...close(),
          sse("message_delta", {
            delta: { stop_reason: event.stopReason, stop_sequence: event.stopSequence ?? null },
            usage: wireUsage(event.usage)
          }),
          sse("message_stop", {})
        ]
    }
  }
}

/**
 * An upstream's events → canonical stream events. Stateful: blocks the
 * platform drops (thinking, server tools) are skipped and the rest renumbered.
 */
export const eventDecoder = (model: string) => {
  const blocks = new Map<number, number>()
  let next = 0
  let inputUsage: Omit<Wire.Usage, "output_tokens"> = { input_tokens: 0 }
  let outputTokens = 0
  let stopReason: string | null | undefined
  let stopSequence: string | null | undefined
  return (event: Wire.StreamEvent): Result.Result<Array<LlmStreamEvent>, string> => {
    switch (event.type) {
      case "message_start":
        inputUsage = event.message.usage
        outputTokens = event.message.usage.output_tokens
        return Result.succeed([{ type: "start", model, inputTokens: usageFrom({ ...inputUsage, output_tokens: 0 }).inputTokens }])
      case "content_block_start": {
        const block = event.content_block
        if (block.type !== "text" && block.type !== "tool_use") return Result.succeed([])
        const index = next++
        blocks.set(event.index, index)
        if (block.type === "tool_use") {
          const call = block as typeof Wire.ToolUseBlock.Type
          return Result.succeed([{ type: "tool_call_start", index, id: call.id, name: call.name }])
        }
        const text = (block as TextBlock).text
        return Result.succeed(text === "" ? [] : [{ type: "text_delta", index, text }])
      }
      case "content_block_delta": {
        const index = blocks.get(event.index)
        const delta = event.delta
        if (index === undefined) return Result.succeed([])
        if (delta.type === "text_delta") return Result.succeed([{ type: "text_delta", index, text: (delta as { text: string }).text }])
        if (delta.type === "input_json_delta") {
          return Result.succeed([{ type: "tool_call_delta", index, partialJson: (delta as { partial_json: string }).partial_json }])
        }
        return Result.succeed([])
      }
      case "content_block_stop":
        return Result.succeed([])
      case "message_delta":
        stopReason = event.delta.stop_reason ?? stopReason
        stopSequence = event.delta.stop_sequence ?? stopSequence
        outputTokens = event.usage.output_tokens
        inputUsage = {
          input_tokens: event.usage.input_tokens ?? inputUsage.input_tokens,
          cache_read_input_tokens: event.usage.cache_read_input_tokens ?? inputUsage.cache_read_input_tokens,
          cache_creation_input_tokens: event.usage.cache_creation_input_tokens ?? inputUsage.cache_creation_input_tokens
        }
        return Result.succeed([])
      case "message_stop":
        return Result.succeed([{
          type: "finish",
          stopReason: stopReasonFrom(stopReason),
          stopSequence: stopSequence ?? undefined,
          usage: usageFrom({ ...inputUsage, output_tokens: outputTokens })
        }])
      case "error":
        return Result.fail(`${event.error.type}: ${event.error.message}`)
    }
  }
}
