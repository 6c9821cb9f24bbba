import { Context, Data, Effect, Stream } from "effect"
import { UnknownModel } from "./Errors.ts"

/**
 * The canonical model call every feature uses (gateway, content tools,
 * design chat, scheduled tasks). Rich enough for both the OpenAI and the
 * Anthropic wire formats without loss; provider layers translate it.
 */

export type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | {
    readonly type: "image"
    /** Known for inline data; a URL image may not say. */
    readonly mediaType?: string | undefined
    /** Base64 bytes. */
    readonly data?: string | undefined
    readonly url?: string | undefined
    /** OpenAI's `detail` hint; other providers ignore it. */
    readonly detail?: "auto" | "low" | "high" | undefined
  }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly input: unknown }
  | {
    readonly type: "tool_result"
    readonly toolCallId: string
    readonly content: ReadonlyArray<ContentPart>
    readonly isError?: boolean | undefined
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
  /** Anthropic's `top_k`; OpenAI-compatible upstreams do not take it. */
  readonly topK?: number | undefined
  readonly stop?: ReadonlyArray<string> | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly toolChoice?: ToolChoice | undefined
  /** False forbids several tool calls in one turn. */
  readonly parallelToolCalls?: boolean | undefined
  /** Alternative completions to generate (OpenAI's `n`); providers without support refuse more than one. */
  readonly n?: number | undefined
  /** OpenAI's `response_format`, passed through to OpenAI-compatible upstreams only. */
  readonly responseFormat?: { readonly type: string; readonly [option: string]: unknown } | undefined
  readonly seed?: number | undefined
  readonly presencePenalty?: number | undefined
  readonly frequencyPenalty?: number | undefined
  /** An end-user id for the provider's abuse monitoring. */
  readonly user?: string | undefined
}

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal"

export interface TokenUsage {
  /** Every input token, cached ones included. */
  readonly inputTokens: number
  readonly outputTokens: number
  /** The part of `inputTokens` read from the provider's prompt cache. */
  readonly cachedTokens: number
}

export interface Alternative {
  readonly content: ReadonlyArray<ContentPart>
  readonly stopReason: StopReason
}

export interface LlmResponse {
  readonly id: string
  /** The platform model id that answered. */
  readonly model: string
  readonly content: ReadonlyArray<ContentPart>
  readonly stopReason: StopReason
  /** The stop sequence that ended the output, when the provider says. */
  readonly stopSequence?: string | undefined
  readonly usage: TokenUsage
  /** Choices 1…n−1 when the request asked for `n` > 1. */
  readonly alternatives?: ReadonlyArray<Alternative> | undefined
}

/**
 * Streaming. `start` comes first, once the provider accepted the request;
 * then content deltas by block index (a block's events are contiguous and
 * blocks come in index order; `choice` tells alternatives apart, 0 when
 * absent); `finish` last, with the stop reason and the usage.
 */
export type LlmStreamEvent =
  | { readonly type: "start"; readonly model: string; readonly inputTokens?: number | undefined }
  | { readonly type: "text_delta"; readonly index: number; readonly text: string; readonly choice?: number | undefined }
  | {
    readonly type: "tool_call_start"
    readonly index: number
    readonly id: string
    readonly name: string
    readonly choice?: number | undefined
  }
  | {
    readonly type: "tool_call_delta"
    readonly index: number
    readonly partialJson: string
    readonly choice?: number | undefined
  }
  | {
    readonly type: "finish"
    readonly stopReason: StopReason
    readonly stopSequence?: string | undefined
    readonly usage: TokenUsage
    /** Stop reasons of choices 1…n−1 when the request asked for `n` > 1. */
    readonly alternativeStopReasons?: ReadonlyArray<StopReason> | undefined
  }

export class LlmError extends Data.TaggedError("LlmError")<{
  /**
   * `invalid_request`: the request cannot be served as sent (the client's fault, 400);
   * `rate_limited`: the provider kept refusing for load (429); `upstream`: the provider failed (500).
   */
  readonly kind: "invalid_request" | "rate_limited" | "upstream"
  readonly message: string
}> {}

export class Llm extends Context.Service<Llm, {
  readonly generate: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmError>
  readonly stream: (request: LlmRequest) => Stream.Stream<LlmStreamEvent, LlmError>
  readonly embed: (request: EmbeddingRequest) => Effect.Effect<EmbeddingResponse, LlmError>
}>()("llm/Llm") {}

/**
 * Fails with 400 naming the model when the catalog cannot serve it: checked
 * when a model is named (a gateway call, an agent, employee or task setting),
 * so that a typo never waits for a run to fail.
 */
export const requireKnownModel = (model: string | null | undefined) =>
  ModelCatalog.use((catalog) =>
    model !== null && model !== undefined && catalog.resolve(model) === undefined
      ? Effect.fail(new UnknownModel({ model }))
      : Effect.void
  )

/** The platform's models, as the `Llm` service routes them (for listings and validation). */
export class ModelCatalog extends Context.Service<ModelCatalog, {
  readonly models: ReadonlyArray<CatalogModel>
  /** The model serving a requested id (exact, else by tier name), if any. */
  readonly resolve: (model: string) => CatalogModel | undefined
}>()("llm/ModelCatalog") {}

export type Tier = "highest" | "balanced" | "fastest"

export type ProviderName = "openai" | "anthropic" | "local"

/** A platform model: its id, who serves it and under which upstream name, and its price when set (`priceOf`). */
export interface CatalogModel {
  readonly id: string
  readonly provider: ProviderName
  readonly upstream: string
  readonly tier?: Tier | undefined
  readonly inputCreditsPerMillion?: number | undefined
  readonly outputCreditsPerMillion?: number | undefined
  readonly maxOutputTokens?: number | undefined
  /** `embedding` models embed text (`Llm.embed`); absent or `chat`: they answer messages. */
  readonly kind?: "chat" | "embedding" | undefined
  /** An embedding model's vector length. */
  readonly dimensions?: number | undefined
}

/** Texts to embed with an embedding model of the catalog. */
export interface EmbeddingRequest {
  readonly model: string
  readonly input: ReadonlyArray<string>
  /** Vector length, for models that can shorten theirs; else the catalog's `dimensions`, else the model's own. */
  readonly dimensions?: number | undefined
  /** An end-user id for the provider's abuse monitoring. */
  readonly user?: string | undefined
}

export interface EmbeddingResponse {
  /** The platform model id that answered. */
  readonly model: string
  /** One vector per input, in the order given. */
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly inputTokens: number
}

export const isEmbeddingModel = (model: CatalogModel) => model.kind === "embedding"

/** The text of a response's text parts, joined. */
export const textOf = (response: Pick<LlmResponse, "content">): string =>
  response.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

/** A one-turn request: a user prompt, optionally with a system prompt. */
export const prompt = (model: string, text: string, system?: string): LlmRequest => ({
  model,
  system,
  messages: [{ role: "user", content: [{ type: "text", text }] }]
})

export const invalidRequest = (message: string) => new LlmError({ kind: "invalid_request", message })
