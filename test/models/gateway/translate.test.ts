import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Result, Schema } from "effect"
import * as Anthropic from "../../../src/models/llm/anthropic/Translate.ts"
import * as AnthropicWire from "../../../src/models/llm/anthropic/Wire.ts"
import { catalogFrom, localModels, resolveModel } from "../../../src/models/llm/Catalog.ts"
import type { CatalogModel, LlmResponse, LlmStreamEvent } from "../../../src/models/llm/Llm.ts"
import * as OpenAiChunks from "../../../src/models/llm/openai/Chunks.ts"
import * as OpenAi from "../../../src/models/llm/openai/Translate.ts"
import * as OpenAiWire from "../../../src/models/llm/openai/Wire.ts"

const openAiRequest = (body: unknown) => Result.getOrThrow(OpenAi.fromChatRequest(Schema.decodeUnknownSync(OpenAiWire.ChatCompletionRequest)(body)))
const anthropicRequest = (body: unknown) =>
  Result.getOrThrow(Anthropic.fromMessagesRequest(Schema.decodeUnknownSync(AnthropicWire.MessagesRequest)(body)))

const pixel = "iVBORw0KGgo="
const weatherSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

describe("OpenAI ↔ canonical", () => {
  it("round-trips a request with system, images, tools, tool calls and results", () => {
    const body = {
      model: "smart",
      messages: [
        { role: "system", content: "Be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "What is here, and the weather?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}`, detail: "low" } },
            { type: "image_url", image_url: { url: "https://example.com/a.jpg" } }
          ]
        },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "18°C" },
        { role: "user", content: "Thanks" }
      ],
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: weatherSchema } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      stop: "END",
      max_completion_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      n: 2,
      seed: 7,
      response_format: { type: "json_object" },
      user: "u1",
      some_future_field: true
    }
    const canonical = openAiRequest(body)
    expect(canonical.system).toBe("Be brief")
    expect(canonical.messages[0].content[1]).toEqual({ type: "image", mediaType: "image/png", data: pixel, detail: "low" })
    expect(canonical.messages[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", toolCallId: "call_1", content: [{ type: "text", text: "18°C" }] }]
    })
    const { some_future_field: _, stop, max_completion_tokens, ...rest } = body
    expect(OpenAi.toChatRequest(canonical, "upstream-model", false)).toEqual({
      ...rest,
      model: "upstream-model",
      stop: [stop],
      max_tokens: max_completion_tokens
    })
  })

  it("names a tool call whose arguments are not JSON", () => {
    const translated = OpenAi.fromChatRequest(Schema.decodeUnknownSync(OpenAiWire.ChatCompletionRequest)({
      model: "m",
      messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }]
    }))
    expect(translated).toEqual(Result.fail("messages.0.tool_calls.0.function.arguments is not valid JSON"))
  })

  it("reads a completion with tool calls and writes it back", () => {
    const wire: OpenAiWire.ChatCompletion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "upstream",
      choices: [{
        index: 0,
        message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }] },
        finish_reason: "tool_calls"
      }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } }
    }
    const canonical = OpenAi.fromChatCompletion(wire, "smart")
    expect(canonical).toMatchObject({
      model: "smart",
      content: [{ type: "tool_call", id: "call_1", name: "f", input: { a: 1 } }],
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 4 }
    })
    expect(OpenAi.toChatCompletion(canonical, 1)).toEqual({
      ...wire,
      model: "smart",
      choices: [{ ...wire.choices[0], message: { ...wire.choices[0].message, refusal: null }, logprobs: null }]
    })
  })

  it("treats a server's `stop` after tool calls as tool use, and maps every finish reason", () => {
    expect(OpenAi.stopReasonFrom("stop", true)).toBe("tool_use")
    const pairs = [["stop", "end_turn"], ["length", "max_tokens"], ["tool_calls", "tool_use"], ["content_filter", "refusal"]] as const
    for (const [wire, canonical] of pairs) {
      expect(OpenAi.stopReasonFrom(wire, false)).toBe(canonical)
      expect(OpenAi.finishReasonOf(canonical)).toBe(wire)
    }
    expect(OpenAi.finishReasonOf("stop_sequence")).toBe("stop")
  })
})

describe("Anthropic ↔ canonical", () => {
  const body = {
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    system: "Be brief",
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "Weather?" }, { type: "image", source: { type: "base64", media_type: "image/jpeg", data: pixel } }]
      },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18°C" }], is_error: false }]
      }
    ],
    tools: [{ name: "get_weather", description: "Weather", input_schema: weatherSchema }],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    stop_sequences: ["END"],
    temperature: 0.2,
    top_p: 0.8,
    top_k: 40,
    metadata: { user_id: "u1" }
  }

  it("round-trips a request with images, tools, tool use and results", () => {
    const canonical = anthropicRequest(body)
    expect(canonical).toMatchObject({ toolChoice: { type: "required" }, parallelToolCalls: false, topK: 40, user: "u1" })
    expect(Anthropic.toMessagesRequest(canonical, "claude-up", false)).toEqual({ ...body, model: "claude-up" })
  })

  it("drops thinking, cache_control, server tools and server-tool blocks, and refuses PDFs", () => {
    const canonical = anthropicRequest({
      model: "m",
      max_tokens: 10,
      thinking: { type: "enabled", budget_tokens: 1024 },
      system: [{ type: "text", text: "A", cache_control: { type: "ephemeral", ttl: "1h" } }, { type: "text", text: "B" }],
      tools: [{ type: "web_search_20250305", name: "web_search" }, { type: "bash_20250124", name: "bash" }],
      tool_choice: { type: "auto" },
      messages: [
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "s" },
            { type: "redacted_thinking", data: "x" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
            { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
            { type: "text", text: "Hi", cache_control: { type: "ephemeral" } }
          ]
        }
      ]
    })
    expect(canonical.system).toBe("A\n\nB")
    expect(canonical.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Hi" }] }])
    expect(canonical.tools).toBeUndefined()
    expect(canonical.toolChoice).toBeUndefined()
    const pdf = Anthropic.fromMessagesRequest(Schema.decodeUnknownSync(AnthropicWire.MessagesRequest)({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "x" } }] }]
    }))
    expect(Result.isFailure(pdf) && pdf.failure).toContain("messages.0.content.0")
  })

  it("rejects a malformed block of a known type instead of ignoring it", () => {
    const decoded = Schema.decodeUnknownResult(AnthropicWire.MessagesRequest)({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: [{ type: "text" }] }]
    })
    expect(Result.isFailure(decoded)).toBe(true)
  })

  it("splits and joins cached input tokens, and maps stop reasons", () => {
    const usage = { inputTokens: 30, outputTokens: 5, cachedTokens: 10 }
    expect(Anthropic.wireUsage(usage)).toEqual({ input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 10, cache_creation_input_tokens: 0 })
    expect(Anthropic.usageFrom(Anthropic.wireUsage(usage))).toEqual(usage)
    for (const reason of ["end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal"] as const) {
      expect(Anthropic.stopReasonFrom(reason)).toBe(reason)
    }
    expect(Anthropic.stopReasonFrom("pause_turn")).toBe("end_turn")
  })
})

describe("across the two formats", () => {
  it("an OpenAI request becomes an Anthropic request: tool messages as tool_result blocks, data URLs as base64 images", () => {
    const canonical = openAiRequest({
      model: "m",
      messages: [
        { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } }] },
        {
          role: "assistant",
          content: "Checking",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "a", arguments: "{}" } },
            { id: "call_2", type: "function", function: { name: "b", arguments: "{\"x\":2}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_1", content: "one" },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "two" }] }
      ],
      tool_choice: "required",
      tools: [{ type: "function", function: { name: "a" } }, { type: "function", function: { name: "b" } }]
    })
    const request = Anthropic.toMessagesRequest(canonical, "claude", true)
    expect(request).toMatchObject({
      max_tokens: Anthropic.defaultMaxTokens,
      stream: true,
      tool_choice: { type: "any" },
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: pixel } }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking" },
            { type: "tool_use", id: "call_1", name: "a", input: {} },
            { type: "tool_use", id: "call_2", name: "b", input: { x: 2 } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: "one" }] },
            { type: "tool_result", tool_use_id: "call_2", content: [{ type: "text", text: "two" }] }
          ]
        }
      ]
    })
  })

  it("an Anthropic request becomes an OpenAI request: tool results as tool messages, their images after them", () => {
    const canonical = anthropicRequest({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "shot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "text", text: "taken" }, { type: "image", source: { type: "base64", media_type: "image/png", data: pixel } }]
            },
            { type: "text", text: "Describe it" }
          ]
        }
      ]
    })
    expect(OpenAi.toChatRequest(canonical, "gpt", false).messages).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "shot", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "taken" },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: `data:image/png;base64,${pixel}` } },
          { type: "text", text: "Describe it" }
        ]
      }
    ])
  })

  it("an OpenAI completion answers as an Anthropic message and back, usage intact", () => {
    const response: LlmResponse = {
      id: "r1",
      model: "smart",
      content: [{ type: "text", text: "Sure" }, { type: "tool_call", id: "call_9", name: "f", input: { q: "x" } }],
      stopReason: "tool_use",
      usage: { inputTokens: 100, outputTokens: 20, cachedTokens: 40 }
    }
    const message = Anthropic.toMessage(response)
    expect(message).toMatchObject({
      content: [{ type: "text", text: "Sure" }, { type: "tool_use", id: "call_9", name: "f", input: { q: "x" } }],
      stop_reason: "tool_use",
      usage: { input_tokens: 60, cache_read_input_tokens: 40, output_tokens: 20 }
    })
    const back = Anthropic.fromMessage(message, "smart")
    expect(OpenAi.toChatCompletion(back, 5)).toEqual(OpenAi.toChatCompletion(response, 5))
  })
})

describe("streams", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0): OpenAiWire.ChatCompletionChunk => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "up",
    choices: [{ index, delta, finish_reason: finish }]
  })

  it("OpenAI chunks → canonical events → Anthropic's event sequence with block indices", () => {
    const decoder = OpenAiChunks.chunkDecoder()
    const events: Array<LlmStreamEvent> = [
      { type: "start", model: "smart" },
      ...[
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Let me " }),
        chunk({ content: "check" }),
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
        chunk({}, "tool_calls"),
        { ...chunk({}), choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } }
      ].flatMap(decoder.decode),
      Effect.runSync(decoder.finish(() => Effect.succeed({ inputTokens: 0, outputTokens: 0, cachedTokens: 0 })))
    ]
    expect(events.slice(1)).toEqual([
      { type: "text_delta", index: 0, text: "Let me " },
      { type: "text_delta", index: 0, text: "check" },
      { type: "tool_call_start", index: 1, id: "call_1", name: "f" },
      { type: "tool_call_delta", index: 1, partialJson: "{\"a\":" },
      { type: "tool_call_delta", index: 1, partialJson: "1}" },
      { type: "finish", stopReason: "tool_use", usage: { inputTokens: 9, outputTokens: 4, cachedTokens: 0 } }
    ])
    const encode = Anthropic.eventEncoder("msg_1")
    const sse = events.flatMap(encode)
    expect(sse.map((event) => [event.event, (event.data as { index?: number }).index])).toEqual([
      ["message_start", undefined],
      ["ping", undefined],
      ["content_block_start", 0],
      ["content_block_delta", 0],
      ["content_block_delta", 0],
      ["content_block_stop", 0],
      ["content_block_start", 1],
      ["content_block_delta", 1],
      ["content_block_delta", 1],
      ["content_block_stop", 1],
      ["message_delta", undefined],
      ["message_stop", undefined]
    ])
    expect(sse.at(-2)?.data).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { input_tokens: 9, output_tokens: 4 } })
  })

  it("estimates usage when an upstream stream reports none", () => {
    const decoder = OpenAiChunks.chunkDecoder()
    decoder.decode(chunk({ content: "abc" }, "stop"))
    expect(Effect.runSync(decoder.finish((generated) => Effect.succeed({ inputTokens: 1, outputTokens: generated.length, cachedTokens: 0 })))).toEqual({
      type: "finish",
      stopReason: "end_turn",
      usage: { inputTokens: 1, outputTokens: 3, cachedTokens: 0 }
    })
  })

  it("Anthropic events → canonical events (thinking skipped) → OpenAI chunks numbering tool calls", () => {
    const decode = Anthropic.eventDecoder("smart")
    const upstream: Array<AnthropicWire.StreamEvent> = [
      { type: "message_start", message: { id: "msg", model: "claude", usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 2 } } },
      { type: "content_block_start", index: 0, content_block: { type: "thinking" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "f", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{}" } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_2", name: "g", input: {} } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 12 } },
      { type: "message_stop" }
    ]
    const events = upstream.flatMap((event) => Result.getOrThrow(decode(event)))
    expect(events).toEqual([
      { type: "start", model: "smart", inputTokens: 7 },
      { type: "tool_call_start", index: 0, id: "toolu_1", name: "f" },
      { type: "tool_call_delta", index: 0, partialJson: "{}" },
      { type: "tool_call_start", index: 1, id: "toolu_2", name: "g" },
      { type: "finish", stopReason: "tool_use", usage: { inputTokens: 7, outputTokens: 12, cachedTokens: 2 } }
    ])
    const encode = OpenAiChunks.chunkEncoder({ id: "chatcmpl-1", created: 1, choices: 1, includeUsage: true })
    const chunks = events.flatMap(encode)
    expect(chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.index)).toEqual([undefined, 0, 0, 1, undefined, undefined])
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe("tool_calls")
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 2 } } })
    expect(Result.getOrThrow(decode({ type: "message_start", message: { id: "m", model: "c", usage: { input_tokens: 1, output_tokens: 0 } } })))
      .toHaveLength(1)
    expect(decode({ type: "error", error: { type: "overloaded_error", message: "busy" } })).toEqual(Result.fail("overloaded_error: busy"))
  })
})

describe("the catalog", () => {
  const models: Array<CatalogModel> = [
    { id: "big", provider: "openai", upstream: "b", tier: "highest" },
    { id: "mid", provider: "openai", upstream: "m", tier: "balanced" },
    { id: "plain", provider: "openai", upstream: "p" }
  ]

  it("routes opus / sonnet / haiku names, dated or aliased, by tier, falling back to the nearest tier", () => {
    expect(resolveModel(models, "plain")?.id).toBe("plain")
    expect(resolveModel(models, "claude-opus-4-1")?.id).toBe("big")
    expect(resolveModel(models, "claude-3-opus-20240229")?.id).toBe("big")
    expect(resolveModel(models, "claude-sonnet-4-5-20250929")?.id).toBe("mid")
    expect(resolveModel(models, "claude-3-5-haiku-20241022")?.id).toBe("mid")
    expect(resolveModel(models, "balanced")?.id).toBe("mid")
    expect(resolveModel(models, "gpt-4o")).toBeUndefined()
  })

  it("comes from LLM_MODELS, provider defaults or the local models, and refuses inconsistent settings", () => {
    const none = { llmModels: Option.none(), openaiBaseUrl: Option.none(), openaiApiKey: Option.none(), anthropicBaseUrl: Option.none(), anthropicApiKey: Option.none() }
    expect(catalogFrom(none)).toEqual({ models: localModels })
    const anthropicOnly = catalogFrom({ ...none, anthropicApiKey: Option.some("k") })
    expect("models" in anthropicOnly && anthropicOnly.models.map((model) => model.provider)).toEqual(["anthropic", "anthropic", "anthropic"])
    expect(catalogFrom({ ...none, llmModels: Option.some([{ id: "x", provider: "openai" }]) })).toEqual({
      error: "LLM_MODELS model x uses provider openai, but neither OPENAI_BASE_URL nor OPENAI_API_KEY is set"
    })
    expect(catalogFrom({ ...none, llmModels: Option.some([{ id: "x", provider: "local" }, { id: "x", provider: "local" }]) })).toEqual({
      error: "LLM_MODELS lists model x twice"
    })
    expect(catalogFrom({ ...none, llmModels: Option.some([{ id: "x", provider: "local", tier: "fastest" }]) })).toEqual({
      models: [{ id: "x", provider: "local", upstream: "x", tier: "fastest" }]
    })
  })
})


