import { Schema } from "effect"

/**
 * The OpenAI chat-completions wire format: what the gateway's
 * `/chat/completions` accepts and answers, and what OpenAI-compatible
 * upstreams (OpenAI, Ollama, vLLM, llama.cpp) take and send. Fields the
 * platform does not use are tolerated and dropped; `null` is accepted
 * wherever the official SDK may send it.
 */

const optionalNullable = <S extends Schema.Constraint>(schema: S) => Schema.optional(Schema.NullOr(schema))

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

export const ImagePart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({
    url: Schema.String,
    detail: Schema.optional(Schema.Literals(["auto", "low", "high"]))
  })
})

export const RefusalPart = Schema.Struct({ type: Schema.Literal("refusal"), refusal: Schema.String })

export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

const TextContent = Schema.Union([Schema.String, Schema.Array(TextPart)])

/** One struct per role, so that a message's `role` picks its schema (a discriminated union). */
const instructionsMessage = <Role extends "system" | "developer">(role: Role) =>
  Schema.Struct({ role: Schema.Literal(role), content: TextContent, name: Schema.optional(Schema.String) })

export const SystemMessage = instructionsMessage("system")

export const DeveloperMessage = instructionsMessage("developer")

export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union([Schema.String, Schema.Array(Schema.Union([TextPart, ImagePart]))]),
  name: Schema.optional(Schema.String)
})

export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: optionalNullable(Schema.Union([Schema.String, Schema.Array(Schema.Union([TextPart, RefusalPart]))])),
  refusal: optionalNullable(Schema.String),
  tool_calls: optionalNullable(Schema.Array(ToolCall)),
  name: Schema.optional(Schema.String)
})

export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  tool_call_id: Schema.String,
  content: TextContent
})

// A role no member has selects no member: the union's message then names every role.
export const Message = Schema.Union([SystemMessage, DeveloperMessage, UserMessage, AssistantMessage, ToolMessage]).annotate({
  message: 'Expected a message whose role is one of "system", "developer", "user", "assistant", "tool"'
})

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String.check(Schema.isMinLength(1)),
    description: Schema.optional(Schema.String),
    parameters: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
    strict: optionalNullable(Schema.Boolean)
  })
})

export const ToolChoice = Schema.Union([
  Schema.Literals(["none", "auto", "required"]),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
])

const Probability = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
const Penalty = Schema.Number.check(Schema.isBetween({ minimum: -2, maximum: 2 }))
const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String.check(Schema.isMinLength(1)),
  messages: Schema.Array(Message).check(Schema.isMinLength(1)),
  stream: optionalNullable(Schema.Boolean),
  stream_options: optionalNullable(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) })),
  max_tokens: optionalNullable(PositiveInt),
  max_completion_tokens: optionalNullable(PositiveInt),
  temperature: optionalNullable(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 2 }))),
  top_p: optionalNullable(Probability),
  n: optionalNullable(PositiveInt.check(Schema.isLessThanOrEqualTo(128))),
  stop: optionalNullable(Schema.Union([Schema.String, Schema.Array(Schema.String).check(Schema.isMaxLength(4))])),
  tools: Schema.optional(Schema.Array(FunctionTool)),
  tool_choice: Schema.optional(ToolChoice),
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  response_format: Schema.optional(Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)])),
  seed: optionalNullable(Schema.Int),
  presence_penalty: optionalNullable(Penalty),
  frequency_penalty: optionalNullable(Penalty),
  user: Schema.optional(Schema.String)
}).annotate({ identifier: "ChatCompletionRequest" })

export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

export const Usage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  total_tokens: Schema.Number,
  prompt_tokens_details: optionalNullable(Schema.Struct({ cached_tokens: optionalNullable(Schema.Number) }))
})

export const ResponseMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: optionalNullable(Schema.String),
  refusal: optionalNullable(Schema.String),
  tool_calls: optionalNullable(Schema.Array(ToolCall))
})

/** What a completion and its chunks share: identity, model, the choices (by index) and the usage. */
const completionOf = <const Kind extends string, Choice extends Schema.Struct.Fields>(object: Kind, choice: Choice) =>
  Schema.Struct({
    id: Schema.String,
    object: Schema.Literal(object),
    created: Schema.Number,
    model: Schema.String,
    choices: Schema.Array(Schema.Struct({ index: Schema.Number, ...choice, logprobs: optionalNullable(Schema.Unknown) })),
    usage: optionalNullable(Usage)
  })

export const ChatCompletion = completionOf("chat.completion", {
  message: ResponseMessage,
  finish_reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ChatCompletion" })

export type ChatCompletion = typeof ChatCompletion.Type

export const DeltaToolCall = Schema.Struct({
  index: Schema.Number,
  id: optionalNullable(Schema.String),
  type: optionalNullable(Schema.Literal("function")),
  function: optionalNullable(Schema.Struct({
    name: optionalNullable(Schema.String),
    arguments: optionalNullable(Schema.String)
  }))
})

export const ChatCompletionChunk = completionOf("chat.completion.chunk", {
  delta: Schema.Struct({
    role: optionalNullable(Schema.String),
    content: optionalNullable(Schema.String),
    refusal: optionalNullable(Schema.String),
    tool_calls: optionalNullable(Schema.Array(DeltaToolCall))
  }),
  finish_reason: optionalNullable(Schema.String)
}).annotate({ identifier: "ChatCompletionChunk" })

export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

/** `GET /models`. */
export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({
    id: Schema.String,
    object: Schema.Literal("model"),
    created: Schema.Number,
    owned_by: Schema.String
  }))
}).annotate({ identifier: "ModelList" })

/** The most texts one embeddings request may carry (OpenAI's own limit). */
export const maxEmbeddingInputs = 2048

/** `POST /embeddings`: texts only (token arrays are not accepted). */
export const EmbeddingRequest = Schema.Struct({
  model: Schema.String,
  input: Schema.Union([
    Schema.String.check(Schema.isMinLength(1)),
    Schema.Array(Schema.String.check(Schema.isMinLength(1))).check(Schema.isMinLength(1), Schema.isMaxLength(maxEmbeddingInputs))
  ]),
  /** The official SDK asks for `base64` (little-endian float32) unless told otherwise. */
  encoding_format: optionalNullable(Schema.Literals(["float", "base64"])),
  dimensions: optionalNullable(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 16_000 }))),
  user: optionalNullable(Schema.String)
}).annotate({ identifier: "EmbeddingRequest" })

export type EmbeddingRequest = typeof EmbeddingRequest.Type

export const EmbeddingList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({
    object: Schema.Literal("embedding"),
    index: Schema.Int,
    embedding: Schema.Union([Schema.Array(Schema.Number), Schema.String])
  })),
  model: Schema.String,
  usage: optionalNullable(Schema.Struct({ prompt_tokens: Schema.Int, total_tokens: Schema.Int }))
}).annotate({ identifier: "EmbeddingList" })

export type EmbeddingList = typeof EmbeddingList.Type
