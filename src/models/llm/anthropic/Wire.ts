import { Schema } from "effect"

/**
 * The Anthropic Messages wire format: what the gateway's
 * `/anthropic/v1/messages` accepts and answers, and what the `anthropic`
 * provider sends upstream. Payloads of the official SDK and Claude Code
 * decode in full: fields the platform does not use are dropped, and content
 * blocks and tools of kinds it does not translate (thinking, server-tool
 * blocks, Anthropic-defined tools) decode as "other" and are ignored.
 */

export const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

export const ImageSource = Schema.Union([
  Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.String, data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("url"), url: Schema.String })
])

export const ImageBlock = Schema.Struct({ type: Schema.Literal("image"), source: ImageSource })

export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown
})

/** Types of content blocks the gateway translates; every other type is accepted and ignored. */
export const translatedBlockTypes: ReadonlySet<string> = new Set(["text", "image", "tool_use", "tool_result", "document"])

/** A content block of a type the gateway does not translate (thinking, server tool use and results, …). */
export const OtherBlock = Schema.Struct({
  type: Schema.String.check(Schema.makeFilter((type: string) => !translatedBlockTypes.has(type) || "a known block type is malformed"))
})

export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.Union([TextBlock, ImageBlock, OtherBlock]))])),
  is_error: Schema.optional(Schema.Boolean)
})

export const DocumentBlock = Schema.Struct({
  type: Schema.Literal("document"),
  source: Schema.Union([
    Schema.Struct({ type: Schema.Literal("text"), data: Schema.String }),
    Schema.Struct({ type: Schema.Literal("content"), content: Schema.Union([Schema.String, Schema.Array(Schema.Union([TextBlock, ImageBlock]))]) }),
    Schema.Struct({ type: Schema.Literals(["base64", "url", "file"]) })
  ]),
  title: Schema.optional(Schema.NullOr(Schema.String))
})

export const ContentBlock = Schema.Union([TextBlock, ImageBlock, ToolUseBlock, ToolResultBlock, DocumentBlock, OtherBlock])

export type ContentBlock = typeof ContentBlock.Type

export const isTranslated = <B extends { readonly type: string }>(
  block: B
): block is Extract<B, { readonly type: "text" | "image" | "tool_use" | "tool_result" | "document" }> =>
  translatedBlockTypes.has(block.type)

export const Message = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.Union([Schema.String, Schema.Array(ContentBlock)])
})

/** A client tool: forwarded to the model. */
export const CustomTool = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  description: Schema.optional(Schema.String),
  input_schema: Schema.Record(Schema.String, Schema.Unknown),
  type: Schema.optional(Schema.NullOr(Schema.Literal("custom")))
})

/** An Anthropic-defined tool (`web_search_20250305`, `bash_20250124`, …): accepted and not forwarded. */
export const VendorTool = Schema.Struct({ type: Schema.String, name: Schema.String })

export const Tool = Schema.Union([CustomTool, VendorTool])

const modeChoice = <Mode extends "auto" | "any" | "none">(type: Mode) =>
  Schema.Struct({ type: Schema.Literal(type), disable_parallel_tool_use: Schema.optional(Schema.Boolean) })

// One member per `type`, so that the type picks its member; a type no member has gets a message naming them all.
export const ToolChoice = Schema.Union([
  modeChoice("auto"),
  modeChoice("any"),
  modeChoice("none"),
  Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String, disable_parallel_tool_use: Schema.optional(Schema.Boolean) })
]).annotate({ message: 'Expected a tool choice whose type is one of "auto", "any", "none", "tool"' })

const System = Schema.Union([Schema.String, Schema.Array(TextBlock)])

const requestFields = {
  model: Schema.String.check(Schema.isMinLength(1)),
  messages: Schema.Array(Message),
  system: Schema.optional(System),
  tools: Schema.optional(Schema.Array(Tool)),
  tool_choice: Schema.optional(ToolChoice),
  /** Extended thinking: accepted and ignored. */
  thinking: Schema.optional(Schema.Unknown)
}

export const MessagesRequest = Schema.Struct({
  ...requestFields,
  max_tokens: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  temperature: Schema.optional(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  top_p: Schema.optional(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  top_k: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  stream: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Schema.Struct({ user_id: Schema.optional(Schema.NullOr(Schema.String)) }))
}).annotate({ identifier: "MessagesRequest" })

export type MessagesRequest = typeof MessagesRequest.Type

export const CountTokensRequest = Schema.Struct(requestFields).annotate({ identifier: "CountTokensRequest" })

export const CountTokensResponse = Schema.Struct({ input_tokens: Schema.Number }).annotate({ identifier: "CountTokensResponse" })

const optionalCount = Schema.optional(Schema.NullOr(Schema.Number))

export const Usage = Schema.Struct({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_read_input_tokens: optionalCount,
  cache_creation_input_tokens: optionalCount
})

export type Usage = typeof Usage.Type

export const MessageResponse = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(Schema.Union([TextBlock, ToolUseBlock, OtherBlock])),
  stop_reason: Schema.NullOr(Schema.String),
  stop_sequence: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Usage
}).annotate({ identifier: "Message" })

export type MessageResponse = typeof MessageResponse.Type

/** The events of an upstream stream the provider reads (`ping` and unknown events are skipped before decoding). */
export const StreamEvent = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("message_start"),
    message: Schema.Struct({ id: Schema.String, model: Schema.String, usage: Usage })
  }),
  Schema.Struct({
    type: Schema.Literal("content_block_start"),
    index: Schema.Number,
    content_block: Schema.Union([TextBlock, ToolUseBlock, OtherBlock])
  }),
  Schema.Struct({
    type: Schema.Literal("content_block_delta"),
    index: Schema.Number,
    delta: Schema.Union([
      Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
      Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String }),
      Schema.Struct({ type: Schema.String.check(Schema.makeFilter((type: string) => type !== "text_delta" && type !== "input_json_delta")) })
    ])
  }),
  Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("message_delta"),
    delta: Schema.Struct({ stop_reason: Schema.optional(Schema.NullOr(Schema.String)), stop_sequence: Schema.optional(Schema.NullOr(Schema.String)) }),
    usage: Schema.Struct({
      output_tokens: Schema.Number,
      input_tokens: optionalCount,
      cache_read_input_tokens: optionalCount,
      cache_creation_input_tokens: optionalCount
    })
  }),
  Schema.Struct({ type: Schema.Literal("message_stop") }),
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.Struct({ type: Schema.String, message: Schema.String }) })
])

export type StreamEvent = typeof StreamEvent.Type

/** `GET /anthropic/v1/models`. */
export const ModelList = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    type: Schema.Literal("model"),
    id: Schema.String,
    display_name: Schema.String,
    created_at: Schema.String
  })),
  has_more: Schema.Boolean,
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AnthropicModelList" })
