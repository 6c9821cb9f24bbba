import { Context, Data, Effect, Stream } from "effect"

/**
 * The canonical model call every feature uses (gateway, content tools,
 * design chat, scheduled tasks). Rich enough for both the OpenAI and the
 * Anthropic wire formats without loss; provider layers translate it.
 */

export type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly mediaType: string; readonly data?: string; readonly url?: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly input: unknown }
  | {
    readonly type: "tool_result"
    readonly toolCallId: string
    readonly content: ReadonlyArray<ContentPart>
    readonly isError?: boolean
  }

export interface LlmMessage {
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<ContentPart>
}

export interface ToolDefinition {
  readonly name: string
  readonly description?: string | undefined
  /** JSON Schema of the tool's input. */
  readonly inputSchema: Record<string, unknown>
}

export type ToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "none" }
  | { readonly type: "required" }
  | { readonly type: "tool"; readonly name: string }

export interface LlmRequest {
  /** A platform model id from the catalog (or a tier alias). */
  readonly model: string
  readonly system?: string | undefined
  readonly messages: ReadonlyArray<LlmMessage>
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly stop?: ReadonlyArray<string> | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
}

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use"

export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedTokens: number
}

export interface LlmResponse {
  readonly id: string
  /** The platform model id that answered. */
  readonly model: string
  readonly content: ReadonlyArray<ContentPart>
  readonly stopReason: StopReason
  readonly usage: TokenUsage
}

/** Streaming: content deltas by block index, then the stop reason and usage. */
export type LlmStreamEvent =
  | { readonly type: "text_delta"; readonly index: number; readonly text: string }
  | { readonly type: "tool_call_start"; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: "tool_call_delta"; readonly index: number; readonly partialJson: string }
  | { readonly type: "finish"; readonly stopReason: StopReason; readonly usage: TokenUsage }

export class LlmError extends Data.TaggedError("LlmError")<{
  /** `invalid_request` for a request the model cannot take (the client's fault), else `upstream`. */
  readonly kind: "invalid_request" | "upstream"
  readonly message: string
}> {}

export class Llm extends Context.Service<Llm, {
  readonly generate: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmError>
  readonly stream: (request: LlmRequest) => Stream.Stream<LlmStreamEvent, LlmError>
}>()("llm/Llm") {}

/** The text of a response's text parts, joined. */
export const textOf = (response: Pick<LlmResponse, "content">): string =>
  response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

/** A one-turn request: a user prompt, optionally with a system prompt. */
export const prompt = (model: string, text: string, system?: string): LlmRequest => ({
  model,
  system,
  messages: [{ role: "user", content: [{ type: "text", text }] }]
})

